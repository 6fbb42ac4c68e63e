"""Our events as ACP session updates: text and thought chunks, tool calls with their kind,
locations and content, the plan, usage. One translator per prompt turn (or replayed history)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from acp import (
    plan_entry,
    start_tool_call,
    text_block,
    tool_content,
    tool_diff_content,
    tool_terminal_ref,
    update_agent_message_text,
    update_agent_thought_text,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.helpers import ToolCallContentVariant
from acp.schema import Cost, UsageUpdate

from agent_cli import events as ev
from agent_cli.acp import tool_calls
from agent_cli.acp.tool_calls import CallView
from agent_cli.models.pricing import Price

Update = Any  # one of acp.schema's session update models


class UpdateTranslator:
    def __init__(self, cwd: Path, replay: bool = False, price: Price | None = None):
        self.cwd = cwd
        self.price = price  # the model's list price, for the cost in usage updates
        self.replay = replay  # a loaded session: user messages are shown too
        self.calls: dict[str, CallView] = {}
        self.terminals: dict[str, str] = {}  # call_id -> the client terminal its command ran in
        self._streamed_text = False  # deltas already showed the message that AgentMessage completes
        self._streamed_thought = False
        self.diagnostics: dict[str, str] = {}  # call_id -> what language servers reported after the edit

    def updates(self, event: ev.Event) -> list[Update]:
        match event:
            case ev.TextDelta(text=text):
                self._streamed_text = True
                return [update_agent_message_text(text)]
            case ev.ReasoningDelta(text=text):
                self._streamed_thought = True
                return [update_agent_thought_text(text)]
            case ev.AgentMessage(text=text):
                streamed, self._streamed_text = self._streamed_text, False
                return [] if streamed else [update_agent_message_text(text)]
            case ev.ReasoningDone(text=text):
                streamed, self._streamed_thought = self._streamed_thought, False
                return [] if streamed else [update_agent_thought_text(text)]
            case ev.UserMessage(text=text, typed=typed) if self.replay:
                return [update_user_message_text(typed or text)]
            case ev.ToolCallBegin(call_id=call_id, name=name, arguments=args):
                view = self.calls[call_id] = tool_calls.begin(name, args, self.cwd)
                return [
                    start_tool_call(
                        call_id,
                        view.title,
                        kind=view.kind,
                        status="in_progress",
                        locations=tool_calls.locations(view, args),
                        raw_input=args,
                    )
                ]
            case ev.ToolTerminal(call_id=call_id, terminal_id=terminal_id):
                self.terminals[call_id] = terminal_id
                return [update_tool_call(call_id, content=[tool_terminal_ref(terminal_id)])]
            case ev.ToolCallEnd():
                return [self._finished(event)]
            case ev.PlanUpdated(plan=plan):
                return [update_plan([plan_entry(step.step, status=step.status) for step in plan])]
            case ev.TokenCount(context_used=used, context_window=window, total=total):
                cost = Cost(amount=round(self.price.cost(total), 6), currency="USD") if self.price else None
                return [UsageUpdate(session_update="usage_update", used=used, size=window, cost=cost)]
            case ev.Notice(text=text) | ev.InputRejected(message=text):
                return [update_agent_message_text(f"\n{text}\n")]
            case ev.Warning(message=message) | ev.Error(message=message):
                return [update_agent_thought_text(f"\n{message}\n")]
            case ev.Retry(attempt=attempt, max_attempts=most, reason=reason):
                return [update_agent_thought_text(f"\nretrying ({attempt}/{most}): {reason}\n")]
            case ev.Diagnostics(call_id=call_id, lines=lines, servers=servers):  # shown with the edit's diff
                self.diagnostics[call_id] = f"New problems ({', '.join(servers)}):\n" + "\n".join(lines)
                return []
            case ev.ProjectCheck(kind=kind, command=command, exit_code=code, tail=tail):
                verdict = "passed" if code == 0 else "timed out" if code is None else f"failed (exit {code})"
                return [
                    update_agent_thought_text(
                        f"\n{kind}: `{command}` {verdict}\n" + ("" if code == 0 else tail[-2000:])
                    )
                ]
            case ev.CompactionFinished(tokens_before=before, tokens_after=after):
                return [update_agent_thought_text(f"\ncompacted the conversation: {before:,} → {after:,} tokens\n")]
        return []

    def _finished(self, event: ev.ToolCallEnd) -> Update:
        self.calls.pop(event.call_id, None)
        status = "completed" if event.success else "failed"
        changed = tool_calls.diffs(event.changes, self.cwd)
        content: list[ToolCallContentVariant]
        if changed:
            content = [tool_diff_content(path, new, old) for path, old, new in changed]
        else:
            content = [tool_content(text_block(event.output))]
        if found := self.diagnostics.pop(event.call_id, None):
            content.append(tool_content(text_block(found)))
        if terminal_id := self.terminals.pop(event.call_id, None):
            content.insert(0, tool_terminal_ref(terminal_id))
        return update_tool_call(event.call_id, status=status, content=content, raw_output=event.output)
