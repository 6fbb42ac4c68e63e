"""The ``[[hooks.<Event>]]`` tables of config.toml, checked and turned into :class:`HookSpec`.

Each entry has ``command`` (run with the shell), an optional ``matcher`` (a regular expression
that must match the whole tool name for tool events, the source for SessionStart and the trigger
for PreCompact; empty or ``*`` matches everything) and ``timeout`` in seconds (default 60).
Claude Code's nested shape, ``{matcher, hooks = [{type = "command", command, timeout}]}``, is
accepted too.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.hooks.vocabulary import claude_views

HOOK_EVENTS = ("SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "PreCompact", "Stop", "SubagentStop")
TOOL_EVENTS = frozenset({"PreToolUse", "PostToolUse"})
DEFAULT_TIMEOUT = 60.0
ENTRY_KEYS = frozenset({"matcher", "command", "timeout", "type", "hooks"})


class HookConfigError(ValueError):
    """A bad hooks table. The message names the file and the key."""


def _error(origin: str, path: str, problem: str) -> HookConfigError:
    return HookConfigError(f"{origin}: `{path}` {problem}")


@dataclass(frozen=True, slots=True)
class HookSpec:
    event: str
    command: str
    matcher: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    env: tuple[tuple[str, str], ...] = ()  # exported to the hook (a plugin's CLAUDE_PLUGIN_ROOT)
    claude_names: bool = False  # a plugin's hook: matched against and fed Claude Code's tool names
    # A hook run in the host program instead of a command (the Claude Agent SDK's callbacks): given
    # the event's JSON, it returns (exit code, stdout, stderr) as a command would.
    runner: Callable[[bytes], Awaitable[tuple[int, str, str]]] | None = field(default=None, compare=False)

    def matches(self, target: str | None) -> bool:
        if self.matcher in (None, "", "*") or target is None:
            return True
        return re.fullmatch(self.matcher, target) is not None


HookTable = dict[str, tuple[HookSpec, ...]]


def parse_hooks(table: Any, origin: str = "config") -> HookTable:
    """Check a ``hooks`` table and return the hooks per event. Raises :class:`HookConfigError`."""
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise _error(origin, "hooks", "must be a table of events")
    result: HookTable = {}
    for event, entries in table.items():
        where = f"hooks.{event}"
        if event not in HOOK_EVENTS:
            raise _error(origin, where, f"is not a hook event; known events: {', '.join(HOOK_EVENTS)}")
        if isinstance(entries, dict):  # [hooks.Event] written as one table instead of [[...]]
            entries = [entries]
        if not isinstance(entries, list):
            raise _error(origin, where, f"must be an array of tables ([[hooks.{event}]])")
        specs: list[HookSpec] = []
        for index, entry in enumerate(entries):
            specs.extend(_parse_entry(event, entry, origin, f"{where}[{index}]"))
        result[event] = tuple(specs)
    return result


def _parse_entry(event: str, entry: Any, origin: str, where: str) -> list[HookSpec]:
    if not isinstance(entry, dict):
        raise _error(origin, where, "must be a table with a `command`")
    unknown = sorted(set(entry) - ENTRY_KEYS)
    if unknown:
        raise _error(origin, f"{where}.{unknown[0]}", "is not a hook setting; expected matcher, command, timeout")
    matcher = entry.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str):
            raise _error(origin, f"{where}.matcher", "must be a string (a regular expression)")
        if matcher not in ("", "*"):
            try:
                re.compile(matcher)
            except re.error as exc:
                raise _error(origin, f"{where}.matcher", f"is not a valid regular expression: {exc}") from None
    if "hooks" in entry:  # nested: one matcher, several commands
        inner = entry["hooks"]
        if not isinstance(inner, list) or "command" in entry:
            raise _error(origin, f"{where}.hooks", "must be an array of tables, each with a `command`")
        specs = []
        for index, hook in enumerate(inner):
            if not isinstance(hook, dict):
                raise _error(origin, f"{where}.hooks[{index}]", "must be a table with a `command`")
            bad = sorted(set(hook) - {"type", "command", "timeout"})
            if bad:
                raise _error(
                    origin, f"{where}.hooks[{index}].{bad[0]}", "is not a hook setting; expected command, timeout"
                )
            specs.append(_spec(event, hook, matcher, origin, f"{where}.hooks[{index}]"))
        return specs
    return [_spec(event, entry, matcher, origin, where)]


def _spec(event: str, entry: dict[str, Any], matcher: str | None, origin: str, where: str) -> HookSpec:
    kind = entry.get("type", "command")
    if kind != "command":
        raise _error(origin, f"{where}.type", f'must be "command", got {kind!r}')
    command = entry.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _error(origin, f"{where}.command", "must be a non-empty string")
    timeout = entry.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise _error(origin, f"{where}.timeout", f"must be a positive number of seconds, got {timeout!r}")
    return HookSpec(event, command, matcher or None, float(timeout))


def hook_calls(
    table: HookTable, event: str, fields: dict[str, Any], cwd: Path
) -> list[tuple[HookSpec, dict[str, Any]]]:
    """Each hook of ``event`` whose matcher accepts the call (tool events) or the source or
    trigger (SessionStart, PreCompact), with the event fields it gets.

    Plugin hooks (``claude_names``) see a tool call in Claude Code's vocabulary, a patch as one
    call per file, so such a hook may run once per file."""
    specs = table.get(event, ())
    if event not in TOOL_EVENTS:
        target = fields.get("source", fields.get("trigger"))
        return [(spec, fields) for spec in specs if spec.matches(target)]
    calls = [(spec, fields) for spec in specs if not spec.claude_names and spec.matches(fields.get("tool_name"))]
    plugin_specs = [spec for spec in specs if spec.claude_names]
    if plugin_specs:
        for name, tool_input in claude_views(fields.get("tool_name", ""), fields.get("tool_input"), cwd):
            view = {**fields, "tool_name": name, "tool_input": tool_input}
            calls += [(spec, view) for spec in plugin_specs if spec.matches(name)]
    return calls
