"""A thread's notifications on Codex's app-server protocol, read back as the typed events
(``events.py``) a front end renders: the reverse of the server's ``app_server/turn_items.py``.

``item/started`` -> deltas -> ``item/completed`` per item become ``ToolCallBegin`` ->
``ToolOutputDelta`` -> ``ToolCallEnd`` (a command, a patch, an MCP or any other tool call),
``TextDelta`` -> ``AgentMessage``, ``ReasoningDelta`` -> ``ReasoningDone``; ``turn/completed``
becomes ``TurnComplete``, ``TurnAborted`` or ``TurnFailed``. A stored turn's items (the turns of
``thread/resume``) read the same way, each as started and completed (:func:`history_events`).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from agent_cli import events as ev
from agent_cli.models.base import Usage
from agent_cli.tools.mcp_names import PREFIX, SEPARATOR

COMPACTED = "the conversation was compacted to free context"
PLAN_STATUS = {"pending": "pending", "inProgress": "in_progress", "completed": "completed"}
TOOL_ITEMS = ("commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall")


class ThreadEvents:
    """One thread's turn and item notifications as events (it remembers the items started, so
    an item's completion ends the tool call its start began)."""

    def __init__(self) -> None:
        self.started: dict[str, dict[str, Any]] = {}  # item id -> the item as it started
        self.turns = 0
        self.error: str | None = None  # the running turn's error, for its TurnFailed
        self.last_answer: str | None = None
        self.compact_trigger: str = "auto"  # "manual" while a compaction this client asked for runs

    def read(self, method: str, params: dict[str, Any]) -> list[ev.Event]:
        match method:
            case "turn/started":
                self.turns += 1
                self.error = None
                return [ev.TurnStarted(self.turns)]
            case "item/started":
                return self._started(params.get("item") or {})
            case "item/completed":
                return self._completed(params.get("item") or {})
            case "item/agentMessage/delta":
                return [ev.TextDelta(str(params.get("delta", "")))]
            case "item/reasoning/summaryTextDelta" | "item/reasoning/textDelta":
                return [ev.ReasoningDelta(str(params.get("delta", "")))]
            case "item/commandExecution/outputDelta":
                return [ev.ToolOutputDelta(str(params.get("itemId", "")), str(params.get("delta", "")))]
            case "turn/plan/updated":
                return [plan_event(params)]
            case "thread/tokenUsage/updated":
                return [token_count(params.get("tokenUsage") or {})]
            case "warning":
                return [ev.Warning(str(params.get("message", "")))]
            case "error":
                message = str((params.get("error") or {}).get("message", ""))
                if params.get("willRetry"):
                    return [ev.Warning(message)]
                self.error = message
                return [ev.Error(message, fatal=True)]
            case "turn/completed":
                return [self._ended(params.get("turn") or {})]
        return []

    def _started(self, item: dict[str, Any]) -> list[ev.Event]:
        item_id, kind = str(item.get("id", "")), item.get("type")
        self.started[item_id] = item
        match kind:
            case "userMessage":
                return [user_message(item)]
            case "contextCompaction":
                trigger = "manual" if self.compact_trigger == "manual" else "auto"
                return [ev.CompactionStarted(trigger)]
            case "enteredReviewMode":
                return [ev.Notice(f"reviewing {item.get('review') or 'the changes'}", title="review")]
            case _ if kind in TOOL_ITEMS:
                name, arguments = tool_call(item)
                return [ev.ToolCallBegin(item_id, name, arguments)]
        return []

    def _completed(self, item: dict[str, Any]) -> list[ev.Event]:
        item_id, kind = str(item.get("id", "")), item.get("type")
        started = self.started.pop(item_id, item)
        match kind:
            case "agentMessage":
                self.last_answer = str(item.get("text", ""))
                return [ev.AgentMessage(self.last_answer)]
            case "reasoning":
                return [ev.ReasoningDone("\n".join(map(str, item.get("summary") or item.get("content") or [])))]
            case "webSearch":
                return [ev.WebSearch(item_id, str(item.get("query", "")))]
            case "contextCompaction":
                return [ev.Notice(COMPACTED, title="context")]
            case _ if kind in TOOL_ITEMS:
                return [tool_end(item_id, started, item)]
        return []

    def _ended(self, turn: dict[str, Any]) -> ev.Event:
        self.started.clear()
        self.compact_trigger = "auto"
        status = turn.get("status")
        if status == "interrupted":
            return ev.TurnAborted("interrupted")
        if status == "failed":
            error = turn.get("error") or {}
            return ev.TurnFailed(str(error.get("message") or self.error or "the turn failed"))
        return ev.TurnComplete(self.last_answer)


def user_message(item: dict[str, Any]) -> ev.UserMessage:
    texts, images = [], []
    for part in item.get("content") or []:
        text = str(part.get("text", "")) if isinstance(part, dict) else ""
        if text.startswith("[image: ") and text.endswith("]"):
            images.append(text[len("[image: ") : -1])
        elif part.get("type") == "localImage":
            images.append(str(part.get("path", "")).rsplit("/", 1)[-1])
        else:
            texts.append(text)
    return ev.UserMessage("\n".join(texts), None, tuple(images))


def tool_call(item: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """The tool name and arguments our events use for a tool item."""
    match item.get("type"):
        case "commandExecution":
            return "shell", {"command": str(item.get("command", "")), "workdir": item.get("cwd")}
        case "fileChange":
            return "apply_patch", {}
        case "mcpToolCall":
            return f"{PREFIX}{item.get('server')}{SEPARATOR}{item.get('tool')}", dict(item.get("arguments") or {})
    arguments = item.get("arguments")
    return str(item.get("tool", "tool")), arguments if isinstance(arguments, dict) else {}


def tool_end(item_id: str, started: dict[str, Any], item: dict[str, Any]) -> ev.ToolCallEnd:
    name, arguments = tool_call(started)
    kind = item.get("type")
    success = item.get("status") == "completed"
    seconds = (item.get("durationMs") or 0) / 1000
    if kind == "commandExecution":
        code = item.get("exitCode")
        output = str(item.get("aggregatedOutput") or "")
        if item.get("status") == "declined":
            output = output or "declined"
        return ev.ToolCallEnd(
            item_id, name, arguments, output, success, seconds, code if isinstance(code, int) else None
        )
    if kind == "fileChange":
        return ev.ToolCallEnd(item_id, name, arguments, "", success, seconds, changes=file_changes(item))
    return ev.ToolCallEnd(item_id, name, arguments, tool_output(item), success, seconds)


def tool_output(item: dict[str, Any]) -> str:
    """What an MCP or other tool call returned, as text."""
    if item.get("type") == "mcpToolCall":
        if (error := item.get("error")) is not None:
            return str(error.get("message", "")) if isinstance(error, dict) else str(error)
        content = (item.get("result") or {}).get("content") or []
    else:
        content = item.get("contentItems") or []
    return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))


def file_changes(item: dict[str, Any]) -> tuple[ev.FileChange, ...]:
    changes = []
    for change in item.get("changes") or []:
        kind = (change.get("kind") or {}).get("type")
        if kind in ("add", "delete", "update"):
            move = (change.get("kind") or {}).get("move_path")
            changes.append(ev.FileChange(str(change.get("path", "")), kind, move, str(change.get("diff", ""))))
    return tuple(changes)


def plan_event(params: dict[str, Any]) -> ev.PlanUpdated:
    steps = tuple(
        ev.PlanStep(str(step.get("step", "")), PLAN_STATUS.get(str(step.get("status")), "pending"))  # type: ignore[arg-type]
        for step in params.get("plan") or []
        if isinstance(step, dict)
    )
    return ev.PlanUpdated(steps, params.get("explanation"))


def usage(breakdown: dict[str, Any]) -> Usage:
    return Usage(
        int(breakdown.get("inputTokens") or 0),
        int(breakdown.get("cachedInputTokens") or 0),
        int(breakdown.get("outputTokens") or 0),
        int(breakdown.get("reasoningOutputTokens") or 0),
    )


def token_count(token_usage: dict[str, Any]) -> ev.TokenCount:
    last, total = usage(token_usage.get("last") or {}), usage(token_usage.get("total") or {})
    window = token_usage.get("modelContextWindow")
    return ev.TokenCount(last, total, last.input_tokens + last.output_tokens, int(window or 0), "reported")


def history_events(turns: Iterable[dict[str, Any]]) -> list[ev.Event]:
    """A thread's stored turns (``thread/resume``'s ``thread.turns``) as the events that show them."""
    reader = ThreadEvents()
    events: list[ev.Event] = []
    for turn in turns:
        for item in turn.get("items") or []:
            events += reader.read("item/started", {"item": item})
            events += reader.read("item/completed", {"item": item})
        if turn.get("status") == "interrupted":
            events.append(ev.Notice("interrupted", title="turn"))
    return events
