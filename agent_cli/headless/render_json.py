"""`agent exec --json`: events as JSON lines, in the shape of Codex's exec schema.

thread.started, turn.started, item.started / item.updated / item.completed (agent_message,
reasoning, refusal, command_execution, file_change, todo_list, tool_call, mcp_tool_call, subagent, compaction, error,
web_search {query, results}; an agent_message citing web sources carries them as ``citations``;
and agent-cli's own checkpoint_created, rewound, diagnostics and project_check),
turn.completed {usage}, turn.failed {error}.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import IO, Any

from agent_cli import events as ev
from agent_cli.event_handlers import ByEventType
from agent_cli.tools.mcp_names import split_name

renders: ByEventType[Callable[[JsonRenderer, Any], None]] = ByEventType()  # one method per event type below


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
        self._checks = 0  # diagnostics and project_check items: their own id series (servers differ by machine)

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
        if (handler := renders.get(event)) is not None:
            handler(self, event)

    @renders(ev.TurnStarted)
    def _turn_started(self, event: ev.TurnStarted) -> None:
        self._turn_usage_start = self._usage.total if self._usage else None
        self.emit("turn.started")

    @renders(ev.NetworkRequest)
    def _network_request(self, event: ev.NetworkRequest) -> None:
        """A sandboxed command's request through the network proxy, once per host, port and answer."""
        request = {
            "id": self.new_id(),
            "type": "network_request",
            "host": event.host,
            "port": event.port,
            "decision": "allowed" if event.allowed else "refused",
            "reason": event.by,
            "call_id": event.call_id,
        }
        self.item("item.completed", request)

    @renders(ev.Refusal)
    def _refusal(self, event: ev.Refusal) -> None:  # as the SDKs keep it: beside the answer, not in it
        self.item("item.completed", {"id": self.new_id(), "type": "refusal", "text": event.text})

    @renders(ev.AgentMessage)
    def _agent_message(self, event: ev.AgentMessage) -> None:
        message = {"id": self.new_id(), "type": "agent_message", "text": event.text}
        if self._citations:
            message["citations"], self._citations = self._citations, []
        self.item("item.completed", message)

    @renders(ev.WebSearch)
    def _web_search(self, event: ev.WebSearch) -> None:
        results = [{"title": source.title, "url": source.url} for source in event.sources]
        search = {"id": self.new_id(), "type": "web_search", "query": event.query, "results": results}
        self.item("item.completed", {**search, "status": event.status})

    @renders(ev.WebCitations)
    def _citations_of(self, event: ev.WebCitations) -> None:
        self._citations = [{"title": source.title, "url": source.url} for source in event.sources]

    @renders(ev.ReasoningDone)
    def _reasoning(self, event: ev.ReasoningDone) -> None:
        self.item("item.completed", {"id": self.new_id(), "type": "reasoning", "text": event.text})

    @renders(ev.ToolCallBegin)
    def _tool_begin(self, event: ev.ToolCallBegin) -> None:
        self._tool_started(event.call_id, event.name, event.arguments)

    @renders(ev.PlanUpdated)
    def _plan(self, event: ev.PlanUpdated) -> None:
        kind = "item.updated" if self._plan_id else "item.started"
        self._plan_id = self._plan_id or self.new_id()
        self._plan_items = [{"text": step.step, "completed": step.status == "completed"} for step in event.plan]
        self.item(kind, {"id": self._plan_id, "type": "todo_list", "items": self._plan_items})

    @renders(ev.Error, ev.Warning)
    def _problem(self, event: ev.Error | ev.Warning) -> None:
        if isinstance(event, ev.Error) and event.fatal:  # Codex's fatal `error` event; turn.failed follows
            self.emit("error", message=event.message)
        else:
            self.item("item.completed", {"id": self.new_id(), "type": "error", "message": event.message})

    @renders(ev.Retry)
    def _retry(self, event: ev.Retry) -> None:
        message = f"retrying ({event.attempt}/{event.max_attempts}) in {event.delay:.1f}s: {event.reason}"
        self.item("item.completed", {"id": self.new_id(), "type": "error", "message": message})

    @renders(ev.CompactionFinished)
    def _compaction(self, event: ev.CompactionFinished) -> None:
        dropped = [
            {"kind": d.kind, "label": d.label, "tokens": d.tokens, "spill_file": d.spill_file} for d in event.dropped
        ]
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
                "dropped": dropped,
            },
        )

    @renders(ev.TokenCount)
    def _tokens(self, event: ev.TokenCount) -> None:
        self._usage = event

    @renders(ev.InputRejected)
    def _rejected(self, event: ev.InputRejected) -> None:
        rejected = {"id": self.new_id(), "type": "error", "message": event.message}
        self.item("item.completed", {**rejected, "suggestions": list(event.suggestions)})

    @renders(ev.Notice)
    def _notice(self, event: ev.Notice) -> None:
        self.item("item.completed", {"id": self.new_id(), "type": "notice", "title": event.title, "text": event.text})

    @renders(ev.CheckpointCreated)
    def _checkpoint(self, event: ev.CheckpointCreated) -> None:
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

    @renders(ev.Rewound)
    def _rewound(self, event: ev.Rewound) -> None:
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

    @renders(ev.Diagnostics, ev.ProjectCheck)
    def _check(self, event: ev.Diagnostics | ev.ProjectCheck) -> None:
        self.item("item.completed", check_item(event, self._checks))
        self._checks += 1

    @renders(ev.ContextUsage)
    def _context(self, event: ev.ContextUsage) -> None:
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

    @renders(ev.TurnComplete)
    def _turn_complete(self, event: ev.TurnComplete) -> None:
        self._complete_plan()
        self.emit("turn.completed", usage=self._turn_usage(), stop_reason=event.stop_reason)

    @renders(ev.TurnFailed, ev.TurnAborted)
    def _turn_failed(self, event: ev.TurnFailed | ev.TurnAborted) -> None:
        if isinstance(event, ev.TurnFailed) and isinstance(event.reason, str):  # max_turns, max_budget, output_schema
            error: dict[str, Any] = {"message": event.message, "reason": event.reason}
        elif isinstance(event, ev.TurnFailed) and isinstance(event.request_id, str):
            error = {"message": event.message, "request_id": event.request_id}
        else:
            self._close_interrupted()
            error = {"message": event.message if isinstance(event, ev.TurnFailed) else event.reason}
        self._complete_plan()
        self.emit("turn.failed", error=error)

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

    @renders(ev.SubagentFinished)
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

    @renders(ev.ToolCallEnd)
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


def check_item(event: ev.Diagnostics | ev.ProjectCheck, number: int) -> dict[str, Any]:
    """A language server's new problems after an edit, or a lint/test command's run."""
    if isinstance(event, ev.Diagnostics):
        return {
            "id": f"diagnostics_{number}",
            "type": "diagnostics",
            "call_id": event.call_id,
            "servers": list(event.servers),
            "errors": event.errors,
            "warnings": event.warnings,
            "diagnostics": list(event.lines),
            "waited_ms": round(event.waited * 1000),
        }
    return {
        "id": f"project_check_{number}",
        "type": "project_check",
        "kind": event.kind,
        "command": event.command,
        "exit_code": event.exit_code,
        "status": "passed" if event.exit_code == 0 else "failed",
        "output_tail": event.tail,
        "sent_to_model": event.sent_to_model,
    }


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
