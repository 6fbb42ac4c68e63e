"""`agent exec --json`: events as JSON lines, in the shape of Codex's exec schema.

thread.started, turn.started, item.started / item.updated / item.completed (agent_message,
reasoning, refusal, command_execution, file_change, todo_list, tool_call, mcp_tool_call, subagent, compaction, error,
web_search {query, results}; an agent_message citing web sources carries them as ``citations``;
and agent-cli's own checkpoint_created and rewound),
turn.completed {usage}, turn.failed {error}.
"""

from __future__ import annotations

import json
from typing import IO, Any

from agent_cli import events as ev
from agent_cli.tools.mcp_names import split_name


class JsonRenderer:
    def __init__(self, out: IO[str]):
        self.out = out
        self._next_id = 0
        self._ids: dict[str, str] = {}  # call_id -> item id
        self._open: dict[str, dict[str, Any]] = {}  # call_id -> its started item, until it completes
        self._plan_id: str | None = None  # the todo_list item of this turn
        self._plan_items: list[dict[str, Any]] = []
        self._usage: ev.TokenCount | None = None
        self._turn_usage_start = None
        self._citations: list[dict[str, str]] = []  # for the next agent_message

    def emit(self, kind: str, **fields: Any) -> None:
        self.out.write(json.dumps({"type": kind, **fields}, ensure_ascii=False) + "\n")
        self.out.flush()

    def new_id(self) -> str:
        item_id = f"item_{self._next_id}"
        self._next_id += 1
        return item_id

    _permission: dict[str, Any] | None = None  # set while a call's completed item is written

    def item(self, kind: str, item: dict[str, Any]) -> None:
        self.emit(kind, item=item if self._permission is None else {**item, "permission": self._permission})

    def session_started(self, session) -> None:
        self.emit("thread.started", thread_id=session.id)

    def finished(self) -> None:
        pass

    def render(self, event: ev.Event) -> None:
        match event:
            case ev.TurnStarted():
                self._turn_usage_start = self._usage.total if self._usage else None
                self.emit("turn.started")
            case ev.Refusal(text=text):  # as the SDKs keep it: beside the answer, not in it
                self.item("item.completed", {"id": self.new_id(), "type": "refusal", "text": text})
            case ev.AgentMessage(text=text):
                message = {"id": self.new_id(), "type": "agent_message", "text": text}
                if self._citations:
                    message["citations"], self._citations = self._citations, []
                self.item("item.completed", message)
            case ev.WebSearch(query=query, sources=sources, status=status):
                results = [{"title": source.title, "url": source.url} for source in sources]
                self.item(
                    "item.completed",
                    {"id": self.new_id(), "type": "web_search", "query": query, "results": results, "status": status},
                )
            case ev.WebCitations(sources=sources):
                self._citations = [{"title": source.title, "url": source.url} for source in sources]
            case ev.ReasoningDone(text=text):
                self.item("item.completed", {"id": self.new_id(), "type": "reasoning", "text": text})
            case ev.ToolCallBegin(call_id=call_id, name=name, arguments=args):
                self._tool_started(call_id, name, args)
            case ev.ToolCallEnd():
                self._tool_finished(event)
            case ev.PlanUpdated(plan=plan):
                kind = "item.updated" if self._plan_id else "item.started"
                self._plan_id = self._plan_id or self.new_id()
                self._plan_items = [{"text": step.step, "completed": step.status == "completed"} for step in plan]
                self.item(kind, {"id": self._plan_id, "type": "todo_list", "items": self._plan_items})
            case ev.Error(message=message, fatal=True):  # Codex's fatal `error` event; turn.failed follows
                self.emit("error", message=message)
            case ev.Warning(message=message) | ev.Error(message=message, fatal=False):
                self.item("item.completed", {"id": self.new_id(), "type": "error", "message": message})
            case ev.Retry(attempt=attempt, max_attempts=most, delay=delay, reason=reason):
                message = f"retrying ({attempt}/{most}) in {delay:.1f}s: {reason}"
                self.item("item.completed", {"id": self.new_id(), "type": "error", "message": message})
            case ev.CompactionFinished():
                self.item(
                    "item.completed",
                    {
                        "id": self.new_id(),
                        "type": "compaction",
                        "trigger": event.trigger,
                        "tokens_before": event.tokens_before,
                        "tokens_after": event.tokens_after,
                        "trimmed": event.trimmed,
                        "applied": event.applied,
                        "fallback": event.fallback,
                        "summary": event.summary,
                        "dropped": [
                            {"kind": d.kind, "label": d.label, "tokens": d.tokens, "spill_file": d.spill_file}
                            for d in event.dropped
                        ],
                    },
                )
            case ev.TokenCount():
                self._usage = event
            case ev.InputRejected(message=message, suggestions=suggestions):
                self.item(
                    "item.completed",
                    {"id": self.new_id(), "type": "error", "message": message, "suggestions": list(suggestions)},
                )
            case ev.Notice(text=text, title=title):
                self.item("item.completed", {"id": self.new_id(), "type": "notice", "title": title, "text": text})
            case ev.SubagentFinished():
                self._subagent_finished(event)
            case ev.CheckpointCreated():
                self.item(
                    "item.completed",
                    {
                        # its own id series, so the items around it keep theirs whether a snapshot was taken or not
                        "id": f"checkpoint_{event.checkpoint_id}",
                        "type": "checkpoint_created",
                        "checkpoint_id": event.checkpoint_id,
                        "turn": event.turn,
                        "commit": event.commit,
                        "files": event.files,
                        "skipped": list(event.skipped),
                    },
                )
            case ev.Rewound():
                self.item(
                    "item.completed",
                    {
                        "id": self.new_id(),
                        "type": "rewound",
                        "mode": event.mode,
                        "restored": list(event.restored),
                        "conflicts": list(event.conflicts),
                        "prompt": event.prompt,
                    },
                )
            case ev.ContextUsage():
                parts = [{"name": part.name, "tokens": part.tokens} for part in event.parts]
                self.item(
                    "item.completed",
                    {
                        "id": self.new_id(),
                        "type": "context_usage",
                        "parts": parts,
                        "used": event.used,
                        "window": event.window,
                        "counting_method": event.counting_method,
                        "accuracy": event.accuracy,
                    },
                )
            case ev.TurnComplete(stop_reason=stop_reason):
                self._complete_plan()
                self.emit("turn.completed", usage=self._turn_usage(), stop_reason=stop_reason)
            case ev.TurnFailed(
                message=message, reason=str() as reason
            ):  # a limit: max_turns, max_budget, output_schema
                self._complete_plan()
                self.emit("turn.failed", error={"message": message, "reason": reason})
            case ev.TurnFailed(message=message, request_id=str() as request_id):
                self._complete_plan()
                self.emit("turn.failed", error={"message": message, "request_id": request_id})
            case ev.TurnFailed(message=message) | ev.TurnAborted(reason=message):
                self._close_interrupted()
                self._complete_plan()
                self.emit("turn.failed", error={"message": message})

    def _complete_plan(self) -> None:
        if self._plan_id:
            self.item("item.completed", {"id": self._plan_id, "type": "todo_list", "items": self._plan_items})
            self._plan_id = None

    def _turn_usage(self) -> dict[str, int]:
        """Codex's usage fields (``reasoning_output_tokens`` from our ``reasoning_tokens``)."""
        fields = {
            "input_tokens": "input_tokens",
            "cached_input_tokens": "cached_input_tokens",
            "output_tokens": "output_tokens",
            "reasoning_output_tokens": "reasoning_tokens",
        }
        if self._usage is None:
            return dict.fromkeys(fields, 0)
        total, start = self._usage.total, self._turn_usage_start
        return {name: getattr(total, ours) - (getattr(start, ours) if start else 0) for name, ours in fields.items()}

    def _subagent_finished(self, event: ev.SubagentFinished) -> None:
        self._open.pop(event.call_id, None)
        item_id = self._ids.pop(event.call_id, None) or self.new_id()
        usage = {name: getattr(event.usage, name) for name in ("input_tokens", "cached_input_tokens", "output_tokens")}
        self.item(
            "item.completed",
            {
                "id": item_id,
                "type": "subagent",
                "agent": event.agent,
                "description": event.description,
                "status": event.status,
                "final_message": event.final_message,
                "usage": usage,
                "transcript": event.transcript,
            },
        )

    def _tool_started(self, call_id: str, name: str, args: dict[str, Any]) -> None:
        if name in ("apply_patch", "update_plan"):
            return  # reported as file_change when done, and as todo_list through PlanUpdated
        item_id = self._ids[call_id] = self.new_id()
        if mcp := split_name(name):
            self._start(call_id, mcp_item(item_id, mcp, args, None, None, "in_progress"))
        elif name == "task":  # completed by SubagentFinished, or by the call's end if no agent ran
            self._start(
                call_id,
                {
                    "id": item_id,
                    "type": "subagent",
                    "agent": str(args.get("agent", "")),
                    "description": str(args.get("description", "")),
                    "status": "in_progress",
                },
            )
        elif name == "shell":
            self._start(
                call_id,
                {
                    "id": item_id,
                    "type": "command_execution",
                    "command": str(args.get("command", "")),
                    "aggregated_output": "",
                    "exit_code": None,
                    "status": "in_progress",
                },
            )
        else:
            self._start(
                call_id, {"id": item_id, "type": "tool_call", "tool": name, "arguments": args, "status": "in_progress"}
            )

    def _start(self, call_id: str, item: dict[str, Any]) -> None:
        self._open[call_id] = item
        self.item("item.started", item)

    def _close_interrupted(self) -> None:
        """Calls a stopped turn never finished complete as failed (interrupted), so a client
        following item ids (the Codex SDKs' runStreamed) is not left with items in progress."""
        for call_id, item in list(self._open.items()):
            self._ids.pop(call_id, None)
            self.item("item.completed", {**item, "status": "interrupted" if item["type"] == "subagent" else "failed"})
        self._open.clear()

    def _tool_finished(self, event: ev.ToolCallEnd) -> None:
        self._open.pop(event.call_id, None)
        if event.permission is not None:  # the item carries the rule that allowed, asked or denied
            permission = {
                "decision": event.permission,
                "rules": [{"rule": rule, "source": source} for rule, source in event.permission_rules],
            }
            self._permission = permission
        try:
            self._item_finished(event)
        finally:
            self._permission = None

    def _item_finished(self, event: ev.ToolCallEnd) -> None:
        if event.name == "update_plan":
            return
        if event.name == "task" and event.call_id not in self._ids:
            return  # its subagent item is already complete
        item_id = self._ids.pop(event.call_id, None) or self.new_id()
        status = "completed" if event.success else "failed"
        if mcp := split_name(event.name):
            result = (
                {"content": [{"type": "text", "text": event.output}], "structured_content": None}
                if event.success
                else None
            )
            error = None if event.success else {"message": event.output}
            self.item("item.completed", mcp_item(item_id, mcp, event.arguments, result, error, status))
        elif event.name == "task":  # refused before any agent ran (unknown agent, a hook, the mode)
            self.item(
                "item.completed",
                {
                    "id": item_id,
                    "type": "subagent",
                    "agent": str(event.arguments.get("agent", "")),
                    "description": str(event.arguments.get("description", "")),
                    "status": "failed",
                    "final_message": event.output,
                    "usage": {"input_tokens": 0, "cached_input_tokens": 0, "output_tokens": 0},
                },
            )
        elif event.name == "shell":
            self.item(
                "item.completed",
                {
                    "id": item_id,
                    "type": "command_execution",
                    "command": str(event.arguments.get("command", "")),
                    "aggregated_output": event.output,
                    "exit_code": event.exit_code,
                    "status": status,
                },
            )
        elif event.name == "apply_patch":
            changes = [{"path": change.path, "kind": change.kind} for change in event.changes]
            item = {"id": item_id, "type": "file_change", "changes": changes, "status": status}
            self.item("item.completed", item if event.success else {**item, "error": event.output})
        else:
            self.item(
                "item.completed",
                {
                    "id": item_id,
                    "type": "tool_call",
                    "tool": event.name,
                    "arguments": event.arguments,
                    "output": event.output,
                    "status": status,
                },
            )


def mcp_item(
    item_id: str, mcp: tuple[str, str], arguments: dict[str, Any], result, error, status: str
) -> dict[str, Any]:
    """Codex's ``mcp_tool_call`` item."""
    return {
        "id": item_id,
        "type": "mcp_tool_call",
        "server": mcp[0],
        "tool": mcp[1],
        "arguments": arguments,
        "result": result,
        "error": error,
        "status": status,
    }
