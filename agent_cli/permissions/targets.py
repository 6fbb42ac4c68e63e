"""What rules judge in one tool call: its commands, the paths it reads or edits, the domain it fetches.

A tool joins the rules by its Claude Code name in ``rules.OURS_TO_CLAUDE`` and its targets here.
``web_fetch`` is already wired: ``{"url": "https://docs.example.com/x"}`` is one ``domain`` target
(the host) that ``WebFetch(domain:example.com)`` / ``WebFetch(domain:*.example.com)`` rules judge;
``Approvals.check`` applies the verdict to every tool call, so the tool needs no code of its own.
To ask directly: ``session.approvals.permissions.decide("web_fetch", {"url": url})`` returns a
``Verdict`` (``decision`` allow | ask | deny | None, and the deciding ``rules``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent_cli.permissions.rules import Target, canonical_tool
from agent_cli.permissions.see_through import Walk, absolute, command_target, spell, variable
from agent_cli.permissions.shell_parse import parse_command_line
from agent_cli.tools.base import ToolError
from agent_cli.tools.patch_parser import AddFile, DeleteFile, UpdateFile, parse_patch


def call_targets(tool: str, args: dict[str, Any], cwd: Path, resolve: bool = False) -> tuple[list[Target], bool]:
    """(targets, readable). ``readable`` is False when a part of the call could not be read (a
    shell line with a syntax error, a patch that does not parse): no allow rule approves it."""
    name = canonical_tool(tool)
    if name == "Bash":
        return shell_targets(str(args.get("command", "")), cwd, resolve)
    if name in ("Read", "Grep", "LS", "Glob"):
        return [Target(name, "read", absolute(cwd, args.get("path") or args.get("file_path")))], True
    if name == "Edit":
        return patch_targets(str(args.get("patch", "")), cwd)
    if name == "WebFetch":
        try:
            host = urlsplit(str(args.get("url", ""))).hostname or ""
        except ValueError:
            host = ""  # the tool reports the bad URL
        return [Target(name, "domain", host)], bool(host)
    return [Target(name, "call")], True


def shell_targets(command: str, cwd: Path, resolve: bool = False) -> tuple[list[Target], bool]:
    """One target per simple command of the line, carrying every other spelling of what it runs
    (``also``) and, as ``opaque`` targets, what the rules cannot see through. ``resolve``: also stat
    the programs and read the shell scripts the line runs (only while Bash deny/ask rules exist)."""
    try:
        return _shell_targets(command, cwd, resolve)
    except (OSError, RuntimeError, ValueError, RecursionError) as exc:  # fail closed, never crash the call
        reason = Target("Bash", "opaque", f"`{command[:77]}` could not be analysed ({type(exc).__name__})")
        return [Target("Bash", "command", command, also=(reason,))], False


def _shell_targets(command: str, cwd: Path, resolve: bool) -> tuple[list[Target], bool]:
    line = parse_command_line(command)
    writes = frozenset(absolute(cwd, path) for path in line.writes)
    aliases, functions = dict(line.aliases), dict(line.functions)
    targets = []
    for index, simple in enumerate(line.commands):
        walk = Walk(cwd, resolve, writes, aliases, functions)
        if index == 0:
            if not line.readable:
                walk.unknown(command, "is a line the parser cannot read")
            for name, value in line.assigns:
                variable(walk, name, value, 0)
        spell(walk, simple.words, simple.literal, 0, simple.stdin, simple.stdin_text)
        also = (*walk.found, *(Target("Bash", "opaque", reason) for reason in dict.fromkeys(walk.opaque)))
        targets.append(replace(command_target(simple.words, simple.literal), also=also))
    if not line.commands and not line.readable:  # `{rm,x}`: nothing parsed, something may run
        reason = Target("Bash", "opaque", f"`{command[:77]}` is a line the parser cannot read")
        targets.append(Target("Bash", "command", command, also=(reason,)))
    targets += [Target("Bash", "edit", path) for path in writes]
    return targets, line.readable and bool(line.commands)


def patch_targets(patch: str, cwd: Path) -> tuple[list[Target], bool]:
    try:
        ops = parse_patch(patch)
    except ToolError:
        return [], False
    paths: list[str] = []
    for op in ops:
        if isinstance(op, (AddFile, DeleteFile, UpdateFile)):
            paths.append(absolute(cwd, op.path))
        if isinstance(op, UpdateFile) and op.move_to:
            paths.append(absolute(cwd, op.move_to))
    return [Target("Edit", "edit", path) for path in paths], bool(paths)
