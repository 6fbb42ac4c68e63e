"""A plugin's hooks, in Claude Code's JSON shape, as hook specs for the session.

``{"hooks": {"<Event>": [{"matcher": "...", "hooks": [{"type": "command", "command": "...",
"timeout": N}]}]}}``. Unlike config.toml (where a mistake stops the agent), a plugin is someone
else's code: an entry we cannot run (an event or hook type we do not have, an unknown key, a bad
matcher) is skipped with one warning and the rest of the plugin still works.
``${CLAUDE_PLUGIN_ROOT}`` and ``${AGENT_PLUGIN_ROOT}`` are expanded in commands and exported to
the hook, with ``CLAUDE_PROJECT_DIR``; the hooks see Claude's tool vocabulary
(:mod:`agent_cli.hooks.vocabulary`).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from agent_cli.hooks.spec import DEFAULT_TIMEOUT, HOOK_EVENTS, HookSpec

ROOT_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "AGENT_PLUGIN_ROOT")
GROUP_KEYS = frozenset({"matcher", "hooks"})
HOOK_KEYS = frozenset({"type", "command", "timeout"})


def root_variables(root: Path) -> dict[str, str]:
    return {name: str(root) for name in ROOT_VARIABLES}


def expand_root(text: str, root: Path) -> str:
    """``${CLAUDE_PLUGIN_ROOT}`` / ``${AGENT_PLUGIN_ROOT}`` replaced by the plugin's folder."""
    for name in ROOT_VARIABLES:
        text = text.replace("${" + name + "}", str(root))
    return text


def parse_plugin_hooks(data: Any, origin: Path, root: Path, project_dir: Path) -> tuple[list[HookSpec], list[str]]:
    """(hook specs, warnings) for one hooks document (a hooks.json file or the manifest's object)."""
    warnings: list[str] = []
    if isinstance(data, dict) and isinstance(data.get("hooks"), dict):
        data = data["hooks"]  # hooks.json wraps the events in "hooks" (and may add "description")
    if not isinstance(data, dict):
        return [], [f'plugin hooks {origin}: expected an object of events ({{"hooks": {{...}}}}); skipped']
    env = (*root_variables(root).items(), ("CLAUDE_PROJECT_DIR", str(project_dir)))
    specs: list[HookSpec] = []
    for event, groups in data.items():
        where = f"plugin hooks {origin}: `{event}`"
        if event not in HOOK_EVENTS:
            warnings.append(f"{where} is not an event this agent runs (supported: {', '.join(HOOK_EVENTS)}); skipped")
            continue
        if not isinstance(groups, list):
            warnings.append(f"{where} must be an array of {{matcher, hooks}} objects; skipped")
            continue
        for index, group in enumerate(groups):
            specs.extend(_group(event, group, f"{where}[{index}]", root, env, warnings))
    return specs, warnings


def _group(event: str, group: Any, where: str, root: Path, env: tuple, warnings: list[str]) -> list[HookSpec]:
    if not isinstance(group, dict) or not isinstance(group.get("hooks"), list):
        warnings.append(f"{where} must be an object with a `hooks` array; skipped")
        return []
    unknown = sorted(set(group) - GROUP_KEYS)
    if unknown:
        warnings.append(f"{where} has unsupported key(s) {', '.join(unknown)}; skipped")
        return []
    matcher = group.get("matcher")
    if matcher is not None and not isinstance(matcher, str):
        warnings.append(f"{where}.matcher must be a string; skipped")
        return []
    if matcher not in (None, "", "*"):
        try:
            re.compile(matcher)
        except re.error as exc:
            warnings.append(f"{where}.matcher is not a valid regular expression ({exc}); skipped")
            return []
    specs = []
    for index, hook in enumerate(group["hooks"]):
        spec, problem = _hook(event, hook, matcher or None, root, env)
        if spec is None:
            warnings.append(f"{where}.hooks[{index}] {problem}; skipped")
        else:
            specs.append(spec)
    return specs


def _hook(event: str, hook: Any, matcher: str | None, root: Path, env: tuple) -> tuple[HookSpec | None, str]:
    if not isinstance(hook, dict):
        return None, "must be an object with a `command`"
    if hook.get("type", "command") != "command":
        return None, f'has type {hook.get("type")!r}; only "command" hooks are supported'
    unknown = sorted(set(hook) - HOOK_KEYS)
    if unknown:
        return None, f"has unsupported key(s) {', '.join(unknown)}"
    command = hook.get("command")
    if not isinstance(command, str) or not command.strip():
        return None, "needs a non-empty `command` string"
    timeout = hook.get("timeout", DEFAULT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
        return None, f"has a bad `timeout` {timeout!r} (seconds, a positive number)"
    return HookSpec(event, expand_root(command, root), matcher, float(timeout), env=env, claude_names=True), ""


SETTINGS_FILES = (Path(".claude") / "settings.json", Path(".claude") / "settings.local.json")


def settings_hooks(project_dir: Path) -> tuple[list[HookSpec], list[str]]:
    """The hooks of Claude Code's project settings (``.claude/settings.json`` and
    ``settings.local.json``), read like a plugin's; the session runs them only in a trusted folder."""
    import json

    specs: list[HookSpec] = []
    warnings: list[str] = []
    for relative in SETTINGS_FILES:
        path = project_dir / relative
        if not path.is_file():
            continue
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            warnings.append(f"{path}: cannot read hooks: {exc}")
            continue
        if isinstance(data, dict) and isinstance(data.get("hooks"), dict):
            found, problems = parse_plugin_hooks(data["hooks"], path, project_dir, project_dir)
            specs += found
            warnings += problems
    return specs, warnings
