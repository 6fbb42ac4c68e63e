"""Turns core events into transcript cells, updating cells in place while they stream.

The app owns lifecycle (running state, approvals, the status bar); this class owns only what
the transcript shows, so it can be driven by any event stream (a turn, /compact, a benchmark).
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from agent_cli import events as ev
from agent_cli.terminal_text import terminal_safe, terminal_safe_event
from agent_cli.tui.formatting import compaction_text
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.context_usage_view import ContextUsageView
from agent_cli.tui.widgets.notice_cell import NoticeCell
from agent_cli.tui.widgets.plan_view import PlanView
from agent_cli.tui.widgets.reasoning_cell import ReasoningCell
from agent_cli.tui.widgets.subagent_cell import SubagentCell
from agent_cli.tui.widgets.tool_cell import ToolCell
from agent_cli.tui.widgets.transcript import Transcript
from agent_cli.tui.widgets.user_message import UserMessage

HIDDEN_TOOL_CELLS = ("update_plan",)  # shown as the plan checklist instead


class EventRenderer:
    def __init__(self, transcript: Transcript):
        self.transcript = transcript
        self.message: AssistantMessage | None = None
        self.reasoning: ReasoningCell | None = None
        self.tools: dict[str, ToolCell] = {}  # a SubagentCell for a task call
        self.pending_user: str | None = None  # shown when typed; its UserMessage event is not shown again

    async def render(self, event: ev.Event) -> None:
        event = terminal_safe_event(event)  # no escape sequence of a model, file or command reaches the terminal
        match event:
            case ev.UserMessage(text=text, typed=typed, images=images):
                shown = typed or text
                if self.pending_user is not None and shown.strip() == self.pending_user.strip():
                    self.pending_user = None
                else:
                    await self.transcript.add(UserMessage(shown + attached_names(images)))
            case ev.TextDelta(text=text):
                await self._close_reasoning()
                if self.message is None:
                    self.message = AssistantMessage()
                    await self.transcript.add(self.message)
                await self.message.write(text)
            case ev.AgentMessage(text=text):
                if isinstance(event, ev.Refusal):
                    await self.notice("The model declined to answer (refusal).", "warning")
                await self._close_reasoning()
                if self.message is None:
                    if text.strip():
                        await self.transcript.add(AssistantMessage(text))
                else:
                    await self.message.finish(text)
                self.message = None
                if self.citations:  # the web sources this answer cites, below it
                    await self.notice(sources_text(self.citations), "info", "sources")
                    self.citations = ()
            case ev.WebSearch(query=query, sources=sources, status=status):
                await self._close_reasoning()
                await self.notice(web_search_text(query, sources, status), "info", "web search")
            case ev.WebCitations(sources=sources):
                self.citations = sources
            case ev.ReasoningDelta(text=text):
                if self.reasoning is None:
                    self.reasoning = ReasoningCell()
                    await self.transcript.add(self.reasoning)
                self.reasoning.append(text)
            case ev.ReasoningDone(text=text):
                if self.reasoning is None:
                    self.reasoning = ReasoningCell(text)
                    await self.transcript.add(self.reasoning)
                await self._close_reasoning(text)
            case ev.ToolCallBegin(call_id=call_id, name=name, arguments=arguments):
                await self.end_streaming()
                if name not in HIDDEN_TOOL_CELLS:
                    cell = (SubagentCell if name == "task" else ToolCell)(call_id, name, arguments)
                    self.tools[call_id] = cell
                    await self.transcript.add(cell)
            case ev.ToolOutputDelta(call_id=call_id, text=text, skipped_bytes=skipped):
                if cell := self.tools.get(call_id):
                    cell.append_output(text, skipped)
            case ev.ToolCallEnd(call_id=call_id):
                if cell := self.tools.pop(call_id, None):
                    cell.finish(event)
                elif not event.success and event.name in HIDDEN_TOOL_CELLS:
                    await self.notice(f"{event.name} failed: {event.output}", "error")
            case ev.SubagentEvent(call_id=call_id, event=inner):
                if isinstance(cell := self.tools.get(call_id), SubagentCell):
                    cell.child_event(inner)
            case ev.SubagentFinished(call_id=call_id):
                if isinstance(cell := self.tools.get(call_id), SubagentCell):
                    cell.subagent_finished(event)
            case ev.PlanUpdated():
                await self.transcript.add(PlanView(event))
            case ev.Retry(attempt=attempt, max_attempts=most, delay=delay, reason=reason):
                await self._drop_partial()
                await self.notice(f"{reason} — retrying in {delay:.0f}s (attempt {attempt}/{most})", "retry")
            case ev.Warning(message=message):
                await self.notice(message, "warning")
            case ev.Error(message=message):
                await self.end_streaming()
                await self.notice(message, "error")
            case ev.Notice(text=text, title=title):
                await self.notice(text, "info", title)
            case ev.InputRejected(message=message):
                await self.notice(message, "error")
            case ev.ContextUsage():
                await self.transcript.add(ContextUsageView(event))
            case ev.CompactionStarted(trigger=trigger):
                await self.end_streaming()
                what = "compacting the conversation" if trigger == "manual" else "context is filling up; compacting"
                await self.notice(what + "…", "context")
            case ev.CompactionFinished():
                await self.notice(compaction_text(event), "context")
            case ev.TurnAborted(reason=reason):
                await self.end_streaming()
                self._close_tools()
                await self.notice(reason, "warning")
            case ev.TurnFailed() | ev.TurnComplete():
                await self.end_streaming()
                self._close_tools()

    citations: tuple = ()  # sources of the answer being streamed, shown once it is finished

    async def user_message(self, text: str, images: tuple[Path, ...] = ()) -> None:
        """Show what the user sent at once, before the core echoes it."""
        self.pending_user = text
        await self.transcript.add(UserMessage(text + attached_names(path.name for path in images)))

    async def notice(self, text: str, kind: str = "info", title: str | None = None) -> None:
        await self.transcript.add(NoticeCell(terminal_safe(text), kind, title))  # type: ignore[arg-type]

    async def end_streaming(self) -> None:
        """Finish whatever streams: a message without its AgentMessage stays as it streamed."""
        await self._close_reasoning()
        if self.message is not None:
            await self.message.finish()
            self.message = None

    async def _close_reasoning(self, text: str | None = None) -> None:
        if self.reasoning is not None:
            self.reasoning.finish(text)
            self.reasoning = None

    async def _drop_partial(self) -> None:
        """A retried request starts over: what streamed from the failed attempt goes away."""
        for cell in (self.message, self.reasoning):
            if cell is not None:
                if isinstance(cell, AssistantMessage):
                    await cell.finish()
                await self.transcript.discard(cell)
        self.message = None
        self.reasoning = None

    def _close_tools(self) -> None:
        """Tool cells whose end never came (the turn was stopped) stop saying 'running'."""
        for call_id, cell in list(self.tools.items()):
            cell.finish(ev.ToolCallEnd(call_id, cell.tool_name, cell.arguments, "(stopped)", False, 0.0))
        self.tools.clear()


def attached_names(names: Iterable[str]) -> str:
    """The images sent with a message, one line each under its text."""
    return "".join(f"\n🖼 {name}" for name in names)


def web_search_text(query: str, sources, status: str) -> str:
    head = f"🔎 {query or '(no query reported)'}" + ("" if status == "completed" else f" ({status})")
    return "\n".join(
        [
            head,
            *(
                f"  {source.title or source.url}  {source.url if source.title else ''}".rstrip()
                for source in sources[:8]
            ),
        ]
    )


def sources_text(sources) -> str:
    return "\n".join(
        f"[{n}] {source.title + ' — ' if source.title else ''}{source.url}" for n, source in enumerate(sources, 1)
    )
