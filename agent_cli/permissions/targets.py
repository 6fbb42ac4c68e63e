"""What rules judge in one tool call: its commands, the paths it reads or edits, the domain it fetches.

A tool joins the rules by its Claude Code name in ``rules.OURS_TO_CLAUDE`` and its targets here.
``web_fetch`` is already wired: ``{"url": "https://docs.example.com/x"}`` is one ``domain`` target
(the host) that ``WebFetch(domain:example.com)`` / ``WebFetch(domain:*.example.com)`` rules judge;
``Approvals.check`` applies the verdict to every tool call, so the tool needs no code of its own.
To ask directly: ``session.approvals.permissions.decide("web_fetch", {"url": url})`` returns a
``Verdict`` (``decision`` allow | ask | deny | None, and the deciding ``rules``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent_cli.permissions.rules import Target, canonical_tool
from agent_cli.permissions.shell_parse import parse_command_line
from agent_cli.tools.base import ToolError
from agent_cli.tools.patch_parser import AddFile, DeleteFile, UpdateFile, parse_patch


def _absolute(cwd: Path, path: object) -> str:
    text = str(path or ".")
    candidate = Path(text).expanduser()
    # Resolved whether written absolute or relative: `/repo/link` (-> .env) and `/repo/src/../.env`
    # are the file a `Read(./.env)` deny rule hides.
    return str((cwd / candidate).resolve())


def call_targets(tool: str, args: dict[str, Any], cwd: Path) -> tuple[list[Target], bool]:
    """(targets, readable). ``readable`` is False when a part of the call could not be read (a
    shell line with a syntax error, a patch that does not parse): no allow rule approves it."""
    name = canonical_tool(tool)
    if name == "Bash":
        return shell_targets(str(args.get("command", "")), cwd)
    if name in ("Read", "Grep", "LS", "Glob"):
        return [Target(name, "read", _absolute(cwd, args.get("path") or args.get("file_path")))], True
    if name == "Edit":
        return patch_targets(str(args.get("patch", "")), cwd)
    if name == "WebFetch":
        try:
            host = urlsplit(str(args.get("url", ""))).hostname or ""
        except ValueError:
            host = ""  # the tool reports the bad URL
        return [Target(name, "domain", host)], bool(host)
    return [Target(name, "call")], True


def _command_target(words: tuple[str, ...], literal: bool, also: tuple[Target, ...] = ()) -> Target:
    head = None
    if not literal:
        leading = []
        for word in words:
            if "$" in word or "`" in word or "<(" in word or ">(" in word:
                break
            leading.append(word)
        head = " ".join(leading)
    return Target("Bash", "command", " ".join(words), head, also)


# Programs that run the rest of their arguments as a command, and their options that take a value.
_WRAPPERS = {
    "env": {"-u", "--unset", "-C", "--chdir", "-S", "--split-string"},
    "command": set(),
    "exec": {"-a"},
    "nohup": set(),
    "time": {"-f", "-o"},
    "setsid": set(),
    "nice": {"-n", "--adjustment"},
    "ionice": {"-c", "-n", "-p"},
    "chrt": set(),
    "timeout": {"-s", "--signal", "-k", "--kill-after"},
    "stdbuf": {"-i", "-o", "-e"},
    "sudo": {"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "-R"},
    "doas": {"-u", "-C"},
    "xargs": {"-a", "-d", "-E", "-I", "-L", "-n", "-P", "-s", "--arg-file", "--delimiter", "--max-args"},
}
_SHELLS = frozenset({"sh", "bash", "dash", "zsh", "ksh", "mksh", "ash", "busybox"})
_DEPTH = 8


def _inner(words: tuple[str, ...]) -> tuple[str, ...] | None:
    """The command a wrapper runs (`timeout 5 curl x` -> `curl x`), or None."""
    program = words[0].rsplit("/", 1)[-1]
    valued = _WRAPPERS.get(program)
    if valued is None:
        return None
    rest = list(words[1:])
    while rest and (rest[0].startswith("-") or (program == "env" and "=" in rest[0])):
        option = rest.pop(0)
        if option == "--":
            break
        if option in valued and rest:
            rest.pop(0)
    if program == "timeout" and rest:
        rest.pop(0)  # the duration
    if program == "chrt" and rest:
        rest.pop(0)  # the priority
    return tuple(rest) or None


def _shell_string(words: tuple[str, ...]) -> str | None:
    """The command string a shell is given (`bash -c 'curl x'`, `eval curl x`), or None."""
    program = words[0].rsplit("/", 1)[-1]
    if program == "eval":
        return " ".join(words[1:]) or None
    if program not in _SHELLS:
        return None
    for index, word in enumerate(words[1:], 1):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:]:
            return words[index + 1] if index + 1 < len(words) else None
        if not word.startswith(("-", "+")):
            return None  # a script file: its commands are not on the line
    return None


def _find_commands(words: tuple[str, ...]) -> list[tuple[str, ...]]:
    """The commands `find ... -exec CMD {} ;` runs (-execdir, -ok, -okdir too)."""
    if words[0].rsplit("/", 1)[-1] != "find":
        return []
    commands, current = [], None
    for word in words[1:]:
        if current is None:
            current = [] if word in ("-exec", "-execdir", "-ok", "-okdir") else None
        elif word in (";", "+"):
            commands.append(tuple(current))
            current = None
        else:
            current.append(word)
    if current:
        commands.append(tuple(current))
    return [command for command in commands if command]


def _spellings(words: tuple[str, ...], literal: bool, cwd: Path, depth: int = 0) -> list[Target]:
    """Every other form under which ``words`` runs a command, flattened."""
    found: list[Target] = []
    if depth > _DEPTH or not words:
        return found
    if "/" in words[0]:
        found.append(_command_target((words[0].rsplit("/", 1)[-1], *words[1:]), literal))
    if inner := _inner(words):
        found.append(_command_target(inner, literal))
        found += _spellings(inner, literal, cwd, depth + 1)
    for inner in _find_commands(words):
        found.append(_command_target(inner, literal))
        found += _spellings(inner, literal, cwd, depth + 1)
    if (string := _shell_string(words)) is not None:
        line = parse_command_line(string)
        for simple in line.commands:
            found.append(_command_target(simple.words, simple.literal))
            found += _spellings(simple.words, simple.literal, cwd, depth + 1)
        found += [Target("Bash", "edit", _absolute(cwd, path)) for path in line.writes]
    return found


def shell_targets(command: str, cwd: Path) -> tuple[list[Target], bool]:
    line = parse_command_line(command)
    targets = [
        _command_target(simple.words, simple.literal, tuple(_spellings(simple.words, simple.literal, cwd)))
        for simple in line.commands
    ]
    targets += [Target("Bash", "edit", _absolute(cwd, path)) for path in line.writes]
    return targets, line.readable and bool(line.commands)


def patch_targets(patch: str, cwd: Path) -> tuple[list[Target], bool]:
    try:
        ops = parse_patch(patch)
    except ToolError:
        return [], False
    paths: list[str] = []
    for op in ops:
        if isinstance(op, (AddFile, DeleteFile, UpdateFile)):
            paths.append(_absolute(cwd, op.path))
        if isinstance(op, UpdateFile) and op.move_to:
            paths.append(_absolute(cwd, op.move_to))
    return [Target("Edit", "edit", path) for path in paths], bool(paths)
