"""The files inside a repository that its configured commands run.

A hook's `"command": "scripts/hook.sh"`, a status line's `python3 "$CLAUDE_PROJECT_DIR"/tools/bar.py`,
an MCP server's `node server.js`, a `lint_command` of `./lint.sh`: the command line is in a
settings file, but what runs is the file it names, and a sandboxed command may rewrite that file.
So the trust hash covers each one's content (inventory.py: a changed script is a new question
before it runs next session), and the ones the agent runs outside the sandbox (hooks, status line,
notify, MCP servers) stay read-only in the sandbox like `.claude/` (runtime.py), so none is
rewritten for its next run in the same session either.

A file is named when a word of the command (the program or an argument, quotes removed,
`$CLAUDE_PROJECT_DIR` replaced by the folder) is the path of an existing regular file inside the
repository, relative to it or absolute. What the command reads in some other way (a script sourced
by the script, a path built from a variable) is not followed: the sandbox keeps `.agent/` and
`.claude/` (where such files usually live) read-only as a whole.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agent_cli.permissions.shell_parse import parse_command_line

PROJECT_VARIABLES = ("CLAUDE_PROJECT_DIR", "AGENT_PROJECT_DIR")
MAX_WORDS = 64  # of one command: a command line is short; this bounds a hostile one


def named_files(command: str | Sequence[str], folder: Path) -> list[Path]:
    """The regular files inside ``folder`` that ``command`` (a shell line, or an argv) names."""
    folder = Path(os.path.realpath(folder))
    if isinstance(command, str):
        text = command
        for name in PROJECT_VARIABLES:
            text = text.replace("${" + name + "}", str(folder)).replace("$" + name, str(folder))
        words = [word for simple in parse_command_line(text).commands for word in simple.words]
    else:
        words = [str(word) for word in command]
    found: list[Path] = []
    for word in words[:MAX_WORDS]:
        if not word or "$" in word or "\0" in word or word.startswith("-"):
            continue
        real = Path(os.path.realpath(folder / os.path.expanduser(word)))
        if real != folder and real.is_relative_to(folder) and real.is_file():
            found.append(real)
    return list(dict.fromkeys(found))


def hook_commands(hooks: Any) -> Iterator[str]:
    """The command of every command hook of a hooks table (ours, or Claude Code's nested one)."""
    if not isinstance(hooks, dict):
        return
    for entries in hooks.values():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict):
                continue
            inner = entry.get("hooks")
            for hook in inner if isinstance(inner, list) else [entry]:
                if isinstance(hook, dict) and isinstance(hook.get("command"), str):
                    yield hook["command"]


def server_commands(servers: Any) -> Iterator[list[str]]:
    """The argv of every stdio MCP server of a servers table (`.mcp.json`'s or ours)."""
    for entry in servers.values() if isinstance(servers, dict) else ():
        if isinstance(entry, dict) and isinstance(entry.get("command"), str):
            args = entry.get("args")
            yield [entry["command"], *map(str, args if isinstance(args, list) else [])]


def unconfined_commands(table: dict[str, Any]) -> Iterator[str | list[str]]:
    """What a config table or a Claude settings object makes the agent run outside the sandbox:
    hooks, the status line, notify and MCP servers."""
    yield from hook_commands(table.get("hooks"))
    for key in ("statusLine", "status_line"):
        line = table.get(key)
        if isinstance(line, dict) and isinstance(line.get("command"), str):
            yield line["command"]
    if isinstance(notify := table.get("notify"), list) and notify:
        yield [str(word) for word in notify]
    yield from server_commands(table.get("mcp_servers"))
    yield from server_commands(table.get("mcpServers"))


def sandboxed_commands(table: dict[str, Any]) -> Iterator[str | list[str]]:
    """What it runs inside the sandbox without asking once trusted: lint and test commands."""
    for key in ("lint_command", "test_command"):
        if isinstance(table.get(key), str):
            yield table[key]


def files_of(commands: Iterable[str | Sequence[str]], folder: Path) -> list[Path]:
    return list(dict.fromkeys(path for command in commands for path in named_files(command, folder)))


def digest(path: Path) -> str:
    """The content's hash ("" when it cannot be read)."""
    hasher = hashlib.sha256()
    try:
        with path.open("rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                hasher.update(block)
    except OSError:
        return ""
    return hasher.hexdigest()
