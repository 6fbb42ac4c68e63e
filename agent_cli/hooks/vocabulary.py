"""Our tool calls as Claude Code's hooks expect to see them, so plugin hook scripts work unchanged.

Plugin hooks match and read Claude's vocabulary: ``tool_name`` is ``Bash``, ``Read``, ``Grep``,
``LS``, ``TodoWrite``, ``Task``, ``Edit`` or ``Write`` and ``tool_input`` has Claude's fields.
One ``apply_patch`` call becomes one view per file it touches (``Write`` for an added file,
``Edit`` for an updated or deleted one), so a hook written for Claude's per-file edits sees
every file. Tools with no Claude counterpart (MCP tools, for one) keep their own name and input.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from agent_cli.tools.base import ToolError
from agent_cli.tools.patch_parser import AddFile, DeleteFile, UpdateFile, parse_patch

ToolView = tuple[str, dict[str, Any]]  # (Claude's tool name, Claude's tool_input)


def claude_views(tool_name: str, tool_input: Any, cwd: Path) -> list[ToolView]:
    """How ``tool_name(tool_input)`` looks to a Claude Code hook: usually one view, one per
    file for a patch, none for a patch that does not parse (it will fail without changing a file)."""
    args = tool_input if isinstance(tool_input, dict) else {}
    if tool_name == "apply_patch":
        return _patch_views(args.get("patch"), cwd)
    translate = _TRANSLATIONS.get(tool_name)
    if translate is None:
        return [(tool_name, args)]
    name, view = translate(args, cwd)
    return [(name, {key: value for key, value in view.items() if value is not None})]


def _absolute(path: Any, cwd: Path) -> str | None:
    """Claude's file paths are absolute."""
    if not isinstance(path, str) or not path:
        return None
    return os.path.normpath(cwd / Path(path).expanduser())


def _bash(args: dict[str, Any], cwd: Path) -> ToolView:
    view = {"command": args.get("command"), "timeout": args.get("timeout_ms")}
    if args.get("run_in_background"):
        view["run_in_background"] = True
    return "Bash", view


def _bash_output(args: dict[str, Any], cwd: Path) -> ToolView:
    return "BashOutput", {"bash_id": args.get("id"), "filter": args.get("filter")}


def _kill_shell(args: dict[str, Any], cwd: Path) -> ToolView:
    return "KillShell", {"shell_id": args.get("id")}


def _web_fetch(args: dict[str, Any], cwd: Path) -> ToolView:
    return "WebFetch", {"url": args.get("url"), "prompt": ""}


def _read(args: dict[str, Any], cwd: Path) -> ToolView:
    return "Read", {
        "file_path": _absolute(args.get("path"), cwd),
        "offset": args.get("offset"),
        "limit": args.get("limit"),
    }


def _grep(args: dict[str, Any], cwd: Path) -> ToolView:
    path = _absolute(args.get("path"), cwd)
    return "Grep", {
        "pattern": args.get("pattern"),
        "path": path,
        "glob": args.get("include"),
        "head_limit": args.get("limit"),
    }


def _ls(args: dict[str, Any], cwd: Path) -> ToolView:
    return "LS", {"path": _absolute(args.get("path") or ".", cwd)}


def _todo_write(args: dict[str, Any], cwd: Path) -> ToolView:
    plan = args.get("plan")
    todos = [
        {"content": step.get("step"), "status": step.get("status"), "activeForm": step.get("step")}
        for step in (plan if isinstance(plan, list) else [])
        if isinstance(step, dict)
    ]
    return "TodoWrite", {"todos": todos}


def _task(args: dict[str, Any], cwd: Path) -> ToolView:
    return "Task", {
        "subagent_type": args.get("agent"),
        "description": args.get("description"),
        "prompt": args.get("prompt"),
    }


_TRANSLATIONS = {
    "shell": _bash,
    "read_file": _read,
    "grep": _grep,
    "list_dir": _ls,
    "update_plan": _todo_write,
    "task": _task,
    "shell_output": _bash_output,
    "shell_kill": _kill_shell,
    "web_fetch": _web_fetch,
}


def _patch_views(patch: Any, cwd: Path) -> list[ToolView]:
    if not isinstance(patch, str):
        return []

    try:
        operations = parse_patch(patch)
    except ToolError:
        return []
    views: list[ToolView] = []
    for op in operations:
        file_path = _absolute(op.path, cwd)
        if isinstance(op, AddFile):
            views.append(("Write", {"file_path": file_path, "content": op.content}))
        elif isinstance(op, DeleteFile):
            views.append(("Edit", {"file_path": file_path, "old_string": "", "new_string": "", "delete": True}))
        elif isinstance(op, UpdateFile):
            old = "\n...\n".join("\n".join(text for kind, text in hunk.lines if kind != "+") for hunk in op.hunks)
            new = "\n...\n".join("\n".join(text for kind, text in hunk.lines if kind != "-") for hunk in op.hunks)
            view = {"file_path": file_path, "old_string": old, "new_string": new}
            if op.move_to:
                view["new_file_path"] = _absolute(op.move_to, cwd)
            views.append(("Edit", view))
    return views
