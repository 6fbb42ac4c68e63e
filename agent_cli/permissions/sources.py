"""Where permission rules are written, read in order (a later source wins between ask and allow;
a deny anywhere wins):

1. ``~/.claude/settings.json``            (user)
2. ``$AGENT_HOME/config.toml`` ``[permissions]``   (user)
3. ``<project>/.claude/settings.json``     (repository)
4. ``<project>/.claude/settings.local.json`` (repository)
5. ``<project>/.agent/config.toml`` ``[permissions]`` (repository)
6. ``-c permissions.allow=[...]``           (user)

Claude Code's JSON shape and our TOML table are the same: ``{allow, ask, deny}`` lists of rules.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent_cli.context.project_doc import find_git_root, repository_root
from agent_cli.permissions.rules import KINDS, Rule, RuleError, parse_rule

CLAUDE_SETTINGS = (".claude", "settings.json")
CLAUDE_LOCAL_SETTINGS = (".claude", "settings.local.json")


class SettingsLayer(Protocol):
    """One table of the merged settings and where it came from (config.py's ConfigLayer)."""

    @property
    def kind(self) -> str: ...  # user | project | override | flags
    @property
    def origin(self) -> str: ...
    @property
    def path(self) -> Path | None: ...
    @property
    def table(self) -> dict[str, Any]: ...


class Settings(Protocol):
    """What the rules are read from: a Config. Named here because config.py imports this package
    (to check a ``[permissions]`` table), so this package cannot import config.py back."""

    @property
    def cwd(self) -> Path: ...
    @property
    def layers(self) -> Sequence[SettingsLayer]: ...
    @property
    def claude_settings(self) -> Sequence[str]: ...  # which of Claude Code's files: user, project, local


@dataclass
class LoadedRules:
    rules: list[Rule] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    files: list[Path] = field(default_factory=list)  # rule files that exist, in order


def project_root(cwd: Path) -> Path:
    return find_git_root(cwd) or cwd


def check_permissions_table(table: Any, origin: str) -> None:
    """The ``[permissions]`` table of config.toml (config.py calls it). Raises ValueError."""
    if not isinstance(table, dict):
        raise ValueError(f"{origin}: `permissions` must be a table")
    for key, value in table.items():
        if key in KINDS:
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise ValueError(f"{origin}: `permissions.{key}` must be an array of rule strings")
            for text in value:
                try:
                    parse_rule(text, key, origin, Path("/"))
                except RuleError as exc:
                    raise ValueError(f"{origin}: `permissions.{key}`: {exc}") from None


def _read_json(path: Path, warnings: list[str]) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        warnings.append(f"{path}: cannot read permission rules: {exc}")
        return {}
    if not isinstance(data, dict):
        warnings.append(f"{path}: expected a JSON object; permission rules ignored")
        return {}
    return data


def _add(loaded: LoadedRules, table: Any, source: str, base: Path, rank: int, repository: bool) -> None:
    if not isinstance(table, dict):
        if table is not None:
            loaded.warnings.append(f"{source}: `permissions` must be an object; ignored")
        return
    for kind in KINDS:
        entries = table.get(kind) or []
        if not isinstance(entries, list):
            loaded.warnings.append(f"{source}: `permissions.{kind}` must be a list; ignored")
            continue
        for text in entries:
            try:
                loaded.rules.append(parse_rule(text, kind, source, base, rank, repository))
            except RuleError as exc:
                loaded.warnings.append(f"{source}: {exc}; ignored")


def load_rules(config: Settings) -> LoadedRules:
    """Every rule in force for ``config``'s folder, in source order."""
    cwd, root = config.cwd, repository_root(config.cwd)
    loaded = LoadedRules()
    layers = {
        kind: [layer for layer in config.layers if layer.kind == kind] for kind in ("user", "project", "override")
    }
    # (source, base folder of relative paths, from the repository, the permissions table or a file to read)
    claude = config.claude_settings
    order: list[tuple[str, Path, bool, Any]] = []
    if "user" in claude:
        order += [("claude-user", cwd, False, Path.home().joinpath(*CLAUDE_SETTINGS))]
    order += [(layer.origin, cwd, False, layer) for layer in layers["user"]]
    # In ~ they are the user's own; in a folder another user can write (root None) they are not read.
    if root is not None and (root / ".claude").resolve() != (Path.home() / ".claude").resolve():
        if "project" in claude:
            order += [("claude-project", root, True, root.joinpath(*CLAUDE_SETTINGS))]
        if "local" in claude:
            order += [("claude-local", root, True, root.joinpath(*CLAUDE_LOCAL_SETTINGS))]
    order += [(layer.origin, layer.path.parent.parent, True, layer) for layer in layers["project"]]  # type: ignore[union-attr]
    order += [(layer.origin, cwd, False, layer) for layer in layers["override"]]
    for rank, (_, base, repository, where) in enumerate(order, start=1):
        if isinstance(where, Path):
            if not where.is_file():
                continue
            loaded.files.append(where)
            _add(loaded, _read_json(where, loaded.warnings).get("permissions"), str(where), base, rank, repository)
        elif "permissions" in where.table:
            if where.path is not None:
                loaded.files.append(where.path)
            _add(loaded, where.table["permissions"], where.origin, base, rank, repository)
    return loaded
