"""Which slash commands exist: the built-ins, then the custom command files.

:func:`list_commands` feeds ``/help`` and the TUI's ``/`` completion; :func:`parse_slash` and
:func:`resolve` are what the dispatcher uses. A built-in always wins over a command file with the
same name (the file is reported in a warning).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.commands.builtins import BUILTINS, Builtin
from agent_cli.commands.catalog import CommandInfo
from agent_cli.commands.custom import CustomCommand, CustomCommandSet, load_custom_commands
from agent_cli.commands.errors import InputError
from agent_cli.commands.mcp_commands import mcp_prompts
from agent_cli.commands.plugin_commands import load_plugin_commands
from agent_cli.display import home_relative
from agent_cli.mcp.prompts import McpPrompt
from agent_cli.plugins.loader import PluginSet
from agent_cli.session.session import Session

# `/name args`; `/usr/bin/x` is not a command because a name ends at whitespace or the end.
_SLASH = re.compile(r"/(?P<name>[A-Za-z][\w.-]*(?::[\w.-]+)*)(?:\s+(?P<args>.*))?\Z", re.DOTALL)
MAX_SUGGESTIONS = 5


@dataclass(frozen=True, slots=True)
class Resolved:
    name: str
    builtin: Builtin | None = None
    custom: CustomCommand | None = None
    mcp_prompt: McpPrompt | None = None


class CommandTable:
    """The built-ins, one scan of the command files, the plugins' commands and the MCP servers' prompts."""

    def __init__(
        self, custom: CustomCommandSet, plugins: PluginSet | None = None, mcp_prompts: Sequence[McpPrompt] = ()
    ):
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
        plugin_commands, problems = load_plugin_commands(plugins) if plugins is not None else ([], [])
        self.warnings += tuple(problems)
        self.aliases = self._add_plugin_commands(plugin_commands)

    def _add_plugin_commands(self, commands: Sequence[CustomCommand]) -> dict[str, CustomCommand]:
        """``/plugin:command`` (a command file of that name wins), and plain ``/command`` when
        nothing else is called that. Returns the plain names."""
        for cmd in commands:
            if cmd.name in self.custom or cmd.name in self.builtins:
                self.warnings += (f"plugin command {cmd.path}: /{cmd.name} already exists; the plugin's is ignored",)
            else:
                self.custom[cmd.name] = cmd
        short_names: dict[str, list[CustomCommand]] = {}
        for cmd in commands:
            short_names.setdefault(cmd.name.split(":", 1)[1], []).append(cmd)
        return {
            short: cmds[0]
            for short, cmds in short_names.items()
            if len(cmds) == 1 and short not in self.builtins and short not in self.custom
        }

    @classmethod
    def load(cls, cwd: Path, agent_home: Path, plugins: PluginSet | None = None) -> CommandTable:
        return cls(load_custom_commands(cwd, agent_home), plugins)

    @classmethod
    def for_session(cls, session: Session) -> CommandTable:
        config, permissions = session.config, session.approvals.permissions
        hidden = permissions.read_denied if permissions.hides_any() else None
        return cls(load_custom_commands(config.cwd, config.agent_home, hidden), session.plugins, mcp_prompts(session))

    def infos(self) -> list[CommandInfo]:
        infos = [
            CommandInfo(b.name, b.description, b.argument_hint, "builtin", b.needs_idle, b.busy_refusal)
            for b in BUILTINS
        ]
        for name in sorted(self.custom):
            cmd = self.custom[name]
            description = cmd.description or f"custom command ({cmd.source})"
            infos.append(CommandInfo(name, description, cmd.argument_hint, cmd.source))
        infos += [CommandInfo(p.command, p.description, p.argument_hint, "mcp") for p in self.mcp_prompts.values()]
        return infos

    def help_lines(self, name: str) -> tuple[str, list[str]]:
        """``/help NAME``: the command's name as listed and what to say about it (InputError when unknown)."""
        resolved = self.resolve(name)
        info = next(i for i in self.infos() if i.name == (resolved.builtin.name if resolved.builtin else name))
        lines = [f"/{info.name} {info.argument_hint}".rstrip(), info.description]
        if resolved.custom:
            lines.append(f"file: {home_relative(resolved.custom.path)}")
            if resolved.custom.model:
                lines.append(f"model: {resolved.custom.model}")
            if resolved.custom.allowed_tools:
                lines.append(f"allowed tools: {', '.join(resolved.custom.allowed_tools)}")
        if resolved.builtin and resolved.builtin.aliases:
            lines.append("also: " + ", ".join("/" + alias for alias in resolved.builtin.aliases))
        return info.name, lines

    def names(self) -> list[str]:
        return [*self.builtins, *self.custom, *self.aliases, *self.mcp_prompts]

    def resolve(self, name: str) -> Resolved:
        if name in self.builtins:
            return Resolved(name, builtin=self.builtins[name])
        if name in self.custom:
            return Resolved(name, custom=self.custom[name])
        if name in self.aliases:
            return Resolved(name, custom=self.aliases[name])
        if name in self.mcp_prompts:
            return Resolved(name, mcp_prompt=self.mcp_prompts[name])
        suggestions = self.suggest(name)
        hint = f"; did you mean {', '.join('/' + s for s in suggestions)}?" if suggestions else ""
        raise InputError(f"unknown command /{name}{hint} (/help lists every command)", suggestions)

    def suggest(self, name: str) -> tuple[str, ...]:
        import difflib

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
    return CommandTable.for_session(session).infos()
