"""Which slash commands exist: the built-ins, then the custom command files.

:func:`list_commands` feeds ``/help`` and the TUI's ``/`` completion; :func:`parse_slash` and
:func:`resolve` are what the dispatcher uses. A built-in always wins over a command file with the
same name (the file is reported in a warning).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from agent_cli.commands.builtins import BUILTINS, Builtin
from agent_cli.commands.custom import CustomCommand, CustomCommandSet, load_custom_commands
from agent_cli.commands.errors import InputError

if TYPE_CHECKING:
    from agent_cli.mcp.prompts import McpPrompt
    from agent_cli.session.session import Session

# `/name args`; `/usr/bin/x` is not a command because a name ends at whitespace or the end.
_SLASH = re.compile(r"/(?P<name>[A-Za-z][\w.-]*(?::[\w.-]+)*)(?:\s+(?P<args>.*))?\Z", re.DOTALL)
MAX_SUGGESTIONS = 5


@dataclass(frozen=True, slots=True)
class CommandInfo:
    name: str  # without the slash, e.g. "review" or "git:commit"
    description: str
    argument_hint: str
    source: Literal["builtin", "repo", "user", "mcp"]
    needs_idle: bool = True  # False: may run while a turn is running (it only reports)


@dataclass(frozen=True, slots=True)
class Resolved:
    name: str
    builtin: Builtin | None = None
    custom: CustomCommand | None = None
    mcp_prompt: McpPrompt | None = None


class CommandTable:
    """The built-ins and one scan of the command files."""

    def __init__(self, custom: CustomCommandSet, mcp_prompts: list[McpPrompt] = ()):  # type: ignore[assignment]
        self.builtins: dict[str, Builtin] = {}
        for builtin in BUILTINS:
            for name in (builtin.name, *builtin.aliases):
                self.builtins[name] = builtin
        self.custom = {name: cmd for name, cmd in custom.commands.items() if name not in self.builtins}
        self.mcp_prompts = {prompt.command: prompt for prompt in mcp_prompts}  # /mcp__server__prompt
        shadowed = [cmd for name, cmd in custom.commands.items() if name in self.builtins]
        self.warnings = custom.warnings + tuple(
            f"command file {cmd.path}: /{cmd.name} is a built-in command; the file is ignored" for cmd in shadowed
        )

    @classmethod
    def load(cls, cwd: Path, agent_home: Path, session: Session | None = None) -> CommandTable:
        """The command files; with a session, also its MCP servers' prompts."""
        from agent_cli.commands.mcp_commands import mcp_prompts

        return cls(load_custom_commands(cwd, agent_home), mcp_prompts(session) if session is not None else [])

    def infos(self) -> list[CommandInfo]:
        infos = [CommandInfo(b.name, b.description, b.argument_hint, "builtin", b.needs_idle) for b in BUILTINS]
        for name in sorted(self.custom):
            cmd = self.custom[name]
            description = cmd.description or f"custom command ({cmd.source})"
            infos.append(CommandInfo(name, description, cmd.argument_hint, cmd.source))  # type: ignore[arg-type]
        infos += [CommandInfo(p.command, p.description, p.argument_hint, "mcp") for p in self.mcp_prompts.values()]
        return infos

    def names(self) -> list[str]:
        return [*self.builtins, *self.custom, *self.mcp_prompts]

    def resolve(self, name: str) -> Resolved:
        if name in self.builtins:
            return Resolved(name, builtin=self.builtins[name])
        if name in self.custom:
            return Resolved(name, custom=self.custom[name])
        if name in self.mcp_prompts:
            return Resolved(name, mcp_prompt=self.mcp_prompts[name])
        suggestions = self.suggest(name)
        hint = f"; did you mean {', '.join('/' + s for s in suggestions)}?" if suggestions else ""
        raise InputError(f"unknown command /{name}{hint} (/help lists every command)", suggestions)

    def suggest(self, name: str) -> tuple[str, ...]:
        names = self.names()
        lowered = name.lower()
        # `/commit` for `/git:commit`, and prefixes like `/rev` for `/review`
        by_part = [n for n in names if n.split(":")[-1].lower() == lowered or n.lower().startswith(lowered)]
        close = difflib.get_close_matches(lowered, names, n=3, cutoff=0.5)
        return tuple(dict.fromkeys([*by_part, *close]))[:MAX_SUGGESTIONS]


def parse_slash(text: str) -> tuple[str, str] | None:
    """``(name, arguments)`` when ``text`` is a slash command, else None."""
    stripped = text.strip()
    if stripped == "/":
        raise InputError("no command name after '/'; /help lists the commands")
    match = _SLASH.fullmatch(stripped)
    if match is None:
        return None
    return match["name"], (match["args"] or "").strip()


def list_commands(session: Session) -> list[CommandInfo]:
    """Every command the session can run, built-ins first, for ``/help`` and completion."""
    return CommandTable.load(session.config.cwd, session.config.agent_home, session).infos()
