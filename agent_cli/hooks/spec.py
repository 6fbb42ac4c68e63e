"""The ``[[hooks.<Event>]]`` tables of config.toml, checked and turned into :class:`HookSpec`.

Each entry has ``command`` (run with the shell), an optional ``matcher`` (a regular expression
that must match the whole tool name for tool events, or the field :data:`MATCH_FIELDS` names for
the others; empty or ``*`` matches everything) and ``timeout`` in seconds (default 60).
Claude Code's nested shape, ``{matcher, hooks = [{type = "command", command, timeout}]}``, is
accepted too, and so are its other hook types: ``http`` (``url``, ``headers``,
``allowedEnvVars``: the event is POSTed as JSON) and ``prompt`` (``prompt``, ``model``: a small
model call decides).
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.hooks.vocabulary import claude_views

HOOK_EVENTS = (
    "SessionStart",
    "UserPromptSubmit",
    "PreToolUse",
    "PermissionRequest",
    "PostToolUse",
    "PostToolUseFailure",
    "Notification",
    "PreCompact",
    "Stop",
    "SubagentStart",
    "SubagentStop",
    "SessionEnd",
)
TOOL_EVENTS = frozenset({"PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure"})
# What a matcher is matched against, for the events that are not about a tool call.
MATCH_FIELDS = {
    "SessionStart": "source",
    "PreCompact": "trigger",
    "SessionEnd": "reason",
    "Notification": "notification_type",
    "SubagentStart": "agent_type",
    "SubagentStop": "agent_type",
}
HOOK_TYPES = ("command", "http", "prompt")
DEFAULT_TIMEOUT = 60.0
MODEL_TIMEOUT = 30.0  # http and prompt hooks (Claude Code's default for them)
# statusMessage (Claude shows it while the hook runs) is accepted and not shown.
HOOK_KEYS = {
    "command": frozenset({"type", "command", "timeout", "async", "statusMessage"}),
    "http": frozenset({"type", "url", "headers", "allowedEnvVars", "timeout", "statusMessage"}),
    "prompt": frozenset({"type", "prompt", "model", "timeout", "statusMessage"}),
}
ENTRY_KEYS = frozenset({"matcher", "hooks"}).union(*HOOK_KEYS.values())


class HookConfigError(ValueError):
    """A bad hooks table. The message names the file and the key."""


def _error(origin: str, path: str, problem: str) -> HookConfigError:
    return HookConfigError(f"{origin}: `{path}` {problem}")


@dataclass(frozen=True, slots=True)
class HookSpec:
    event: str
    command: str  # a command hook's shell command; the URL of an http hook, the prompt of a prompt hook
    matcher: str | None = None
    timeout: float = DEFAULT_TIMEOUT
    env: tuple[tuple[str, str], ...] = ()  # exported to the hook (a plugin's CLAUDE_PLUGIN_ROOT)
    claude_names: bool = False  # a plugin's hook: matched against and fed Claude Code's tool names
    # A hook run in the host program instead of a command (the Claude Agent SDK's callbacks): given
    # the event's JSON, it returns (exit code, stdout, stderr) as a command would.
    runner: Callable[[bytes], Awaitable[tuple[int, str, str]]] | None = field(default=None, compare=False)
    kind: str = "command"  # command | http | prompt
    headers: tuple[tuple[str, str], ...] = ()  # http: sent with the POST ($VAR from allowed_env_vars only)
    allowed_env_vars: tuple[str, ...] = ()
    model: str | None = None  # prompt: the model that decides (default: the session's)
    background: bool = False  # Claude's `async`: runs beside the session, decides nothing

    @property
    def label(self) -> str:
        """How messages name the hook."""
        return self.command if self.kind == "command" else f"{self.kind} {self.command}"

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
            specs.append(_spec(event, hook, matcher, origin, f"{where}.hooks[{index}]"))
        return specs
    return [_spec(event, entry, matcher, origin, where)]


def _spec(event: str, entry: dict[str, Any], matcher: str | None, origin: str, where: str) -> HookSpec:
    try:
        return hook_spec(event, {key: value for key, value in entry.items() if key != "matcher"}, matcher)
    except HookEntryError as exc:
        raise _error(origin, f"{where}.{exc.key}", exc.problem) from None


class HookEntryError(ValueError):
    """One hook's bad setting: ``key`` and what is wrong with it."""

    def __init__(self, key: str, problem: str):
        super().__init__(f"`{key}` {problem}")
        self.key, self.problem = key, problem


def hook_spec(event: str, hook: dict[str, Any], matcher: str | None) -> HookSpec:
    """One ``{type, command | url | prompt, ...}`` table as a spec; :class:`HookEntryError` if bad.
    config.toml, Claude's settings files and plugins share it."""
    kind = hook.get("type", "command")
    if kind not in HOOK_TYPES:
        raise HookEntryError("type", f"must be one of {', '.join(HOOK_TYPES)}, got {kind!r}")
    unknown = sorted(set(hook) - HOOK_KEYS[kind])
    if unknown:
        expected = ", ".join(sorted(HOOK_KEYS[kind] - {"type"}))
        raise HookEntryError(unknown[0], f"is not a setting of a {kind} hook; expected {expected}")
    main = {"command": "command", "http": "url", "prompt": "prompt"}[kind]
    text = hook.get(main)
    if not isinstance(text, str) or not text.strip():
        raise HookEntryError(main, "must be a non-empty string")
    if kind == "http" and not text.startswith(("http://", "https://")):
        raise HookEntryError("url", f"must be an http:// or https:// URL, got {text!r}")
    timeout = hook.get("timeout", DEFAULT_TIMEOUT if kind == "command" else MODEL_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        raise HookEntryError("timeout", f"must be a positive number of seconds, got {timeout!r}")
    headers = hook.get("headers", {})
    if not isinstance(headers, dict) or not all(isinstance(v, str) for v in headers.values()):
        raise HookEntryError("headers", "must be a table of strings")
    allowed = hook.get("allowedEnvVars", [])
    if not isinstance(allowed, list) or not all(isinstance(name, str) for name in allowed):
        raise HookEntryError("allowedEnvVars", "must be an array of variable names")
    model = hook.get("model")
    if model is not None and (not isinstance(model, str) or not model.strip()):
        raise HookEntryError("model", "must be a model name")
    background = hook.get("async", False)
    if not isinstance(background, bool):
        raise HookEntryError("async", "must be true or false")
    return HookSpec(
        event,
        text,
        matcher or None,
        float(timeout),
        kind=kind,
        headers=tuple((str(k), v) for k, v in headers.items()),
        allowed_env_vars=tuple(allowed),
        model=model,
        background=background,
    )


def hook_calls(
    table: HookTable, event: str, fields: dict[str, Any], cwd: Path
) -> list[tuple[HookSpec, dict[str, Any]]]:
    """Each hook of ``event`` whose matcher accepts the call (tool events) or the field
    :data:`MATCH_FIELDS` names (a source, trigger, reason...), with the event fields it gets.

    Plugin hooks (``claude_names``) see a tool call in Claude Code's vocabulary, a patch as one
    call per file, so such a hook may run once per file."""
    specs = table.get(event, ())
    if event not in TOOL_EVENTS:
        target = fields.get(MATCH_FIELDS.get(event, ""))
        return [(spec, fields) for spec in specs if spec.matches(target)]
    calls = [(spec, fields) for spec in specs if not spec.claude_names and spec.matches(fields.get("tool_name"))]
    plugin_specs = [spec for spec in specs if spec.claude_names]
    if plugin_specs:
        for name, tool_input in claude_views(fields.get("tool_name", ""), fields.get("tool_input"), cwd):
            view = {**fields, "tool_name": name, "tool_input": tool_input}
            calls += [(spec, view) for spec in plugin_specs if spec.matches(name)]
    return calls
