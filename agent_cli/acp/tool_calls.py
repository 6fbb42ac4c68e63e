"""Our tool calls as ACP shows them: a kind, a title, the files they touch, and their content
(the output text, or old and new text per file for a patch)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from acp.schema import ToolCallLocation, ToolKind

from agent_cli import events as ev
from agent_cli.tools.mcp_names import split_name

KINDS: dict[str, ToolKind] = {
    "shell": "execute",
    "read_file": "read",
    "grep": "search",
    "list_dir": "search",
    "apply_patch": "edit",
    "update_plan": "think",
    "task": "think",
    "web_fetch": "fetch",
    "memory_search": "search",
}
PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$|^\*\*\* Move to: (.+)$", re.MULTILINE)


@dataclass(frozen=True)
class CallView:
    """What the client was told about one call."""

    kind: ToolKind
    title: str
    paths: list[Path]


def begin(name: str, args: dict[str, Any], cwd: Path) -> CallView:
    return CallView(KINDS.get(name, "other"), title(name, args), [cwd / path for path in touched_paths(name, args)])


def locations(view: CallView, args: dict[str, Any]) -> list[ToolCallLocation]:
    line = args.get("offset") if isinstance(args.get("offset"), int) else None
    return [ToolCallLocation(path=str(path), line=line) for path in view.paths]


def title(name: str, args: dict[str, Any]) -> str:
    if name == "shell":
        return str(args.get("command", "shell"))
    if name == "read_file":
        return f"Read {args.get('path', '')}"
    if name == "grep":
        return f"Search for {args.get('pattern', '')!r}" + (f" in {args['path']}" if args.get("path") else "")
    if name == "list_dir":
        return f"List {args.get('path', '.')}"
    if name == "apply_patch":
        return "Edit " + ", ".join(touched_paths(name, args))
    if name == "update_plan":
        return "Update the plan"
    if name == "task":
        return f"Subagent {args.get('agent', '')}: {args.get('description', '')}".strip()
    if mcp := split_name(name):
        return f"{mcp[0]}: {mcp[1]}"
    return name


def touched_paths(name: str, args: dict[str, Any]) -> list[str]:
    if name == "apply_patch":
        patch = str(args.get("patch", args.get("input", "")))
        return [match[1] or match[2] for match in PATCH_FILE.finditer(patch)]
    if name in ("read_file", "list_dir", "grep") and isinstance(args.get("path"), str):
        return [args["path"]]
    return []


def diffs(changes: tuple[ev.FileChange, ...], cwd: Path) -> list[tuple[str, str | None, str]]:
    """(path, old text or None for a new file, new text) per changed file: the changed regions
    with their context lines, from the patch's unified diff (the files have moved on by the time
    a front end reads the event)."""
    result = []
    for change in changes:
        old, new = texts_from_unified(change.diff)
        result.append((str(cwd / (change.move_to or change.path)), None if change.kind == "add" else old, new))
    return result


def texts_from_unified(diff: str) -> tuple[str, str]:
    old: list[str] = []
    new: list[str] = []
    for line in diff.splitlines(keepends=True):
        if line.startswith(("---", "+++", "@@", "\\")):
            continue
        if line.startswith((" ", "-")):
            old.append(line[1:])
        if line.startswith((" ", "+")):
            new.append(line[1:])
    return "".join(old), "".join(new)
