"""Codex's ``ThreadItem`` shapes, built from our events' values: what a client shows for a message,
reasoning, a command, a patch, an MCP call or any other tool call. Pure functions of plain
values; turn_items.py decides when each is started, updated and completed."""

from __future__ import annotations

from typing import Any

from agent_cli import events as ev
from agent_cli.tools.mcp_names import split_name
from agent_cli.tools.patch_preview import patch_changes

SHELL = "shell"
PATCH = "apply_patch"
PLAN = "update_plan"  # shown as turn/plan/updated, not as an item
WEB_SEARCH = "web_search"


def text_input(text: str) -> dict[str, Any]:
    return {"type": "text", "text": text, "text_elements": []}


def user_message(item_id: str, text: str, images: tuple[str, ...] = ()) -> dict[str, Any]:
    content = [text_input(text)]
    content += [text_input(f"[image: {name}]") for name in images]
    return {"type": "userMessage", "id": item_id, "content": content}


def agent_message(item_id: str, text: str) -> dict[str, Any]:
    return {"type": "agentMessage", "id": item_id, "text": text}


def reasoning(item_id: str, text: str) -> dict[str, Any]:
    return {"type": "reasoning", "id": item_id, "summary": [text] if text else [], "content": []}


def compaction(item_id: str) -> dict[str, Any]:
    return {"type": "contextCompaction", "id": item_id}


def review_mode(item_id: str, entered: bool, review: str) -> dict[str, Any]:
    return {"type": "enteredReviewMode" if entered else "exitedReviewMode", "id": item_id, "review": review}


def web_search(item_id: str, query: str) -> dict[str, Any]:
    return {"type": "webSearch", "id": item_id, "query": query, "action": {"type": "search", "query": query}}


def tool_started(item_id: str, name: str, arguments: dict[str, Any], cwd: str) -> dict[str, Any]:
    """The item a tool call shows while it runs (and waits for approval)."""
    if name == SHELL:
        command = str(arguments.get("command", ""))
        return {
            "type": "commandExecution",
            "id": item_id,
            "command": command,
            "cwd": str(arguments.get("workdir") or cwd),
            "status": "inProgress",
            "commandActions": [{"type": "unknown", "command": command}],
            "source": "agent",
        }
    if name == PATCH:
        changes = patch_changes(str(arguments.get("patch", "")))
        return {"type": "fileChange", "id": item_id, "changes": file_changes(changes), "status": "inProgress"}
    if name == WEB_SEARCH:
        return web_search(item_id, str(arguments.get("query", "")))
    if (mcp := split_name(name)) is not None:
        server, tool = mcp
        return {
            "type": "mcpToolCall",
            "id": item_id,
            "server": server,
            "tool": tool,
            "arguments": arguments,
            "status": "inProgress",
        }
    return {"type": "dynamicToolCall", "id": item_id, "tool": name, "arguments": arguments, "status": "inProgress"}


def tool_completed(started: dict[str, Any], end: ev.ToolCallEnd, output: str, declined: bool) -> dict[str, Any]:
    """``started`` finished as ``end`` says; ``output`` is what the client saw stream (when
    nothing streamed, what the model read, without its header); ``declined``: the user said no."""
    item = dict(started)
    kind = item["type"]
    ms = int(end.duration * 1000)
    if kind == "commandExecution":
        status = "declined" if declined else ("completed" if end.success else "failed")
        item.update(
            status=status, aggregatedOutput=output or command_output(end.output), exitCode=end.exit_code, durationMs=ms
        )
    elif kind == "fileChange":
        if end.changes:
            item["changes"] = file_changes(end.changes)
        item["status"] = "declined" if declined else ("completed" if end.success else "failed")
    elif kind == "mcpToolCall":
        item["durationMs"] = ms
        if end.success:
            item.update(status="completed", result={"content": [{"type": "text", "text": end.output}]})
        else:
            item.update(status="failed", error={"message": end.output})
    elif kind == "dynamicToolCall":
        item.update(
            status="completed" if end.success else "failed",
            success=end.success,
            contentItems=[{"type": "inputText", "text": end.output}],
            durationMs=ms,
        )
    return item


def command_output(output: str) -> str:
    """What a command printed, without the header the model reads above it (exit code, time)."""
    if output.startswith("Exit code:") and (at := output.find("\nOutput:\n")) >= 0:
        return output[at + len("\nOutput:\n") :]
    return output


def file_changes(changes: tuple[ev.FileChange, ...]) -> list[dict[str, Any]]:
    result = []
    for change in changes:
        kind: dict[str, Any] = {"type": change.kind}
        if change.kind == "update":
            kind["move_path"] = change.move_to
        result.append({"path": change.path, "kind": kind, "diff": change.diff})
    return result


def interrupted(item: dict[str, Any]) -> dict[str, Any]:
    """An item still open when its turn ended: closed as not having finished."""
    done = dict(item)
    if done["type"] in ("commandExecution", "fileChange", "mcpToolCall", "dynamicToolCall"):
        done["status"] = "failed"
    return done


def usage_breakdown(usage: Any) -> dict[str, int]:
    """A models.base.Usage in Codex's TokenUsageBreakdown shape."""
    return {
        "totalTokens": usage.input_tokens + usage.output_tokens,
        "inputTokens": usage.input_tokens,
        "cachedInputTokens": usage.cached_input_tokens,
        "outputTokens": usage.output_tokens,
        "reasoningOutputTokens": usage.reasoning_tokens,
    }


PLAN_STATUS = {"pending": "pending", "in_progress": "inProgress", "completed": "completed"}


def plan_steps(plan: tuple[ev.PlanStep, ...]) -> list[dict[str, str]]:
    return [{"step": step.step, "status": PLAN_STATUS[step.status]} for step in plan]
