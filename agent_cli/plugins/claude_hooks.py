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

import json
import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from agent_cli.hooks.spec import HOOK_EVENTS, HookEntryError, HookSpec, hook_spec

ROOT_VARIABLES = ("CLAUDE_PLUGIN_ROOT", "AGENT_PLUGIN_ROOT")
GROUP_KEYS = frozenset({"matcher", "hooks"})


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
    try:
        spec = hook_spec(event, hook, matcher)
    except HookEntryError as exc:
        return None, str(exc)
    return replace(spec, command=expand_root(spec.command, root), env=env, claude_names=True), ""


SETTINGS_FILES = (Path(".claude") / "settings.json", Path(".claude") / "settings.local.json")
SETTING_SOURCES = ("user", "project", "local")  # Claude Code's names for its three settings files


def settings_files(project_dir: Path, trusted: bool, sources: Sequence[str] = SETTING_SOURCES) -> list[Path]:
    """Claude Code's settings files in force, the user's first: ``~/.claude/settings.json`` (no
    trust needed, it is theirs), then the project's shared and local ones once it is trusted;
    only those ``sources`` names (the Claude Agent SDK's ``--setting-sources``)."""
    files = [Path.home() / ".claude" / "settings.json"] if "user" in sources else []
    if trusted:
        files += [
            project_dir / relative for name, relative in zip(SETTING_SOURCES[1:], SETTINGS_FILES) if name in sources
        ]
    return files


def read_settings(path: Path, warnings: list[str]) -> dict[str, Any]:
    """One settings file's object ({} when it is missing; a warning when it is unreadable)."""
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warnings.append(f"{path}: cannot read it: {exc}")
        return {}
    return data if isinstance(data, dict) else {}


def hooks_disabled(project_dir: Path, trusted: bool, sources: Sequence[str] = SETTING_SOURCES) -> bool:
    """Claude Code's ``"disableAllHooks": true`` in a settings file in force: its hooks and its
    status line are off."""
    warnings: list[str] = []
    return any(
        read_settings(path, warnings).get("disableAllHooks") is True
        for path in settings_files(project_dir, trusted, sources)
    )


def settings_hooks(
    project_dir: Path, trusted: bool = True, sources: Sequence[str] = SETTING_SOURCES
) -> tuple[list[HookSpec], list[str]]:
    """The hooks of Claude Code's settings files (:func:`settings_files`), read like a plugin's.
    All of them run, whichever file declares them, as in Claude Code, unless one disables them."""
    specs: list[HookSpec] = []
    warnings: list[str] = []
    if hooks_disabled(project_dir, trusted, sources):
        return specs, warnings
    for path in settings_files(project_dir, trusted, sources):
        data = read_settings(path, warnings)
        if isinstance(data.get("hooks"), dict):
            found, problems = parse_plugin_hooks(data["hooks"], path, project_dir, project_dir)
            specs += found
            warnings += problems
    return specs, warnings
