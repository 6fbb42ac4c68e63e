"""Which status line command is in force, with Claude Code's precedence.

``status_line = {type = "command", command = "..."}`` in config.toml comes first; then Claude
Code's ``statusLine`` of ``.claude/settings.local.json``, ``.claude/settings.json`` (both only once
the folder is trusted: they would run a repository's command) and ``~/.claude/settings.json``
(the user's own: no trust needed). The first file that sets one wins, as in Claude Code.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.config import Config
from agent_cli.context.project_doc import repository_root
from agent_cli.plugins.claude_hooks import hooks_disabled, read_settings, settings_files


@dataclass(frozen=True, slots=True)
class StatusLineSetting:
    command: str
    origin: str  # where it is set, for messages
    padding: int = 0  # Claude's: spaces before the line


def _parse(value: Any, origin: str, warnings: list[str]) -> StatusLineSetting | None:
    if not isinstance(value, dict):
        warnings.append(f"{origin}: statusLine must be an object with `type` and `command`; ignored")
        return None
    if value.get("type", "command") != "command" or not isinstance(value.get("command"), str):
        warnings.append(f'{origin}: statusLine needs "type": "command" and a `command` string; ignored')
        return None
    padding = value.get("padding", 0)
    padding = padding if isinstance(padding, int) and not isinstance(padding, bool) and 0 <= padding <= 20 else 0
    return StatusLineSetting(value["command"], origin, padding)


def our_setting(config: Config, trusted: bool) -> Any:
    """config.toml's ``status_line``: a repository's own only once the folder is trusted."""
    found = None
    for layer in config.layers:
        if "status_line" in layer.table and (trusted or layer.kind != "project"):
            found = (layer.table["status_line"], layer.origin)
    return found


def find_status_line(config: Config, trusted: bool) -> tuple[StatusLineSetting | None, list[str]]:
    """The command in force (None: no status line) and problems to show."""
    warnings: list[str] = []
    if (ours := our_setting(config, trusted)) is not None:
        return _parse(ours[0], ours[1], warnings), warnings
    project = repository_root(config.cwd) or config.cwd
    in_home = (project / ".claude").resolve() == (Path.home() / ".claude").resolve()
    trusted = trusted and repository_root(config.cwd) is not None  # another user's folder: never read
    if hooks_disabled(
        project, trusted and not in_home, config.claude_settings
    ):  # Claude's disableAllHooks: no status line either
        return None, warnings
    for path in reversed(
        settings_files(project, trusted and not in_home, config.claude_settings)
    ):  # local, project, user
        data = read_settings(path, warnings)
        if "statusLine" in data:
            return _parse(data["statusLine"], str(path), warnings), warnings
    return None, warnings
