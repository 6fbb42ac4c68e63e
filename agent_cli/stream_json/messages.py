"""The messages of the stream-json protocol, in the shape `claude` writes them: system/init,
assistant and user messages in Anthropic's message shape, result, stream_event."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from typing import Any

from agent_cli import __version__
from agent_cli.hooks.vocabulary import claude_views
from agent_cli.models.base import Usage
from agent_cli.session.session import Session

CLAUDE_CODE_VERSION = __version__  # what system/init reports as the CLI's version
# Why a turn failed -> the result's subtype.
FAILURE_SUBTYPES = {
    "max_turns": "error_max_turns",
    "max_budget": "error_max_budget_usd",
    "output_schema": "error_max_structured_output_retries",
}


def new_uuid() -> str:
    return str(uuid.uuid4())


def claude_tool(name: str, arguments: dict[str, Any], cwd: Path) -> tuple[str, dict[str, Any]]:
    """A call of ours as Claude's SDK users see it: ``Bash {command}``, ``Read {file_path}``…;
    a patch and tools with no Claude counterpart keep their own name and arguments."""
    if name == "apply_patch":
        return name, arguments
    views = claude_views(name, arguments, cwd)
    return views[0] if len(views) == 1 else (name, arguments)


def our_arguments(name: str, claude_input: dict[str, Any], original: dict[str, Any]) -> dict[str, Any]:
    """``updatedInput`` of a ``can_use_tool`` answer (Claude's vocabulary) as our tool's arguments."""
    if name == "shell":
        updated = {**original, "command": claude_input.get("command", original.get("command"))}
        if claude_input.get("timeout") is not None:
            updated["timeout_ms"] = claude_input["timeout"]
        return updated
    if name == "read_file" and "file_path" in claude_input:
        updated = {**original, "path": claude_input["file_path"]}
        for key in ("offset", "limit"):
            if key in claude_input:
                updated[key] = claude_input[key]
        return updated
    if name in ("grep", "list_dir", "update_plan", "task", "web_fetch", "shell_output", "shell_kill"):
        return original  # their Claude view is read-only here: an edited one is not applied
    return claude_input


def claude_usage(usage: Usage) -> dict[str, Any]:
    return {
        "input_tokens": max(0, usage.input_tokens - usage.cached_input_tokens),
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": usage.cached_input_tokens,
        "output_tokens": usage.output_tokens,
        "server_tool_use": {"web_search_requests": 0, "web_fetch_requests": 0},
        "service_tier": "standard",
    }


def system_init(
    session: Session, permission_mode: str, tools: list[str], servers: list[dict], commands: list[str]
) -> dict:
    return {
        "type": "system",
        "subtype": "init",
        "cwd": str(session.config.cwd),
        "session_id": session.id,
        "tools": tools,
        "mcp_servers": servers,
        "model": session.model,
        "permissionMode": permission_mode,
        "slash_commands": commands,
        "apiKeySource": "none",
        "claude_code_version": CLAUDE_CODE_VERSION,
        "output_style": "default",
        "agents": list(getattr(session.agents, "names", [])),
        "skills": [],
        "plugins": [],
        "uuid": new_uuid(),
        "pid": os.getpid(),
    }


def assistant(session_id: str, model: str, block: dict, parent: str | None, message_id: str) -> dict:
    return {
        "type": "assistant",
        "message": {
            "id": message_id,
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [block],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": claude_usage(Usage()),
        },
        "parent_tool_use_id": parent,
        "session_id": session_id,
        "uuid": new_uuid(),
    }


def tool_result(session_id: str, call_id: str, output: str, success: bool, parent: str | None) -> dict:
    return {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"tool_use_id": call_id, "type": "tool_result", "content": output, "is_error": not success}],
        },
        "parent_tool_use_id": parent,
        "session_id": session_id,
        "uuid": new_uuid(),
        "tool_use_result": {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}
        if success
        else f"Error: {output}",
    }


def user_text(session_id: str, text: str) -> dict:
    return {
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": text}]},
        "parent_tool_use_id": None,
        "session_id": session_id,
        "uuid": new_uuid(),
    }


def stream_event(session_id: str, event: dict, parent: str | None = None) -> dict:
    return {
        "type": "stream_event",
        "uuid": new_uuid(),
        "session_id": session_id,
        "event": event,
        "parent_tool_use_id": parent,
    }


def control_success(request_id: str, response: dict | None = None) -> dict:
    return {
        "type": "control_response",
        "response": {"subtype": "success", "request_id": request_id, "response": response or {}},
    }


def control_error(request_id: str, message: str) -> dict:
    return {"type": "control_response", "response": {"subtype": "error", "request_id": request_id, "error": message}}
