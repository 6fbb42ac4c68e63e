"""A plugin's ``.claude-plugin/plugin.json`` (Claude Code's format), read and checked.

``name`` is required (it namespaces the plugin's commands, skills and agents); ``version``,
``description`` and ``author`` are shown in listings. ``commands``, ``agents``, ``skills``,
``hooks`` and ``mcpServers`` may name extra files or folders (a path or a list of paths,
relative to the plugin's folder); as in Claude Code they add to the default places, they do not
replace them. ``hooks`` and ``mcpServers`` may also be the configuration itself, inline.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

MANIFEST = Path(".claude-plugin") / "plugin.json"
NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")
PATH_KEYS = ("commands", "agents", "skills", "hooks", "mcpServers")
INLINE_KEYS = ("hooks", "mcpServers")


class ManifestError(ValueError):
    """A manifest that cannot be used; the message names the file."""


@dataclass(frozen=True)
class Manifest:
    path: Path
    name: str
    version: str = ""
    description: str = ""
    author: str = ""
    paths: dict[str, tuple[Path, ...]] = field(default_factory=dict)  # key -> extra component paths
    inline: dict[str, dict[str, Any]] = field(default_factory=dict)  # hooks / mcpServers given inline
    warnings: tuple[str, ...] = ()  # problems with single keys; the rest of the plugin still loads

    @property
    def root(self) -> Path:
        return self.path.parent.parent


def read_manifest(root: Path) -> Manifest:
    """The checked manifest of the plugin in ``root``. Raises :class:`ManifestError`."""
    path = root / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ManifestError(f"plugin manifest {path}: cannot read ({exc.strerror or exc})") from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise ManifestError(f"plugin manifest {path}: invalid JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ManifestError(f"plugin manifest {path}: must be a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not NAME.match(name):
        raise ManifestError(
            f"plugin manifest {path}: `name` must be a plugin name (letters, digits, '-', '_', '.'), got {name!r}"
        )
    warnings: list[str] = []
    paths: dict[str, tuple[Path, ...]] = {}
    inline: dict[str, dict[str, Any]] = {}
    for key in PATH_KEYS:
        value = data.get(key)
        if value is None:
            continue
        if isinstance(value, dict) and key in INLINE_KEYS:
            inline[key] = value
            continue
        entries = [value] if isinstance(value, str) else value
        if not isinstance(entries, list) or not all(isinstance(entry, str) for entry in entries):
            warnings.append(f"plugin manifest {path}: `{key}` must be a path or a list of paths; ignored")
            continue
        resolved = []
        for entry in entries:
            target, problem = component_path(root, entry)
            if target is None:
                warnings.append(f"plugin manifest {path}: `{key}` entry {entry!r} {problem}; ignored")
            else:
                resolved.append(target)
        paths[key] = tuple(resolved)
    return Manifest(
        path=path,
        name=name,
        version=_text(data.get("version")),
        description=_text(data.get("description")),
        author=_author(data.get("author")),
        paths=paths,
        inline=inline,
        warnings=tuple(warnings),
    )


def component_path(root: Path, entry: str) -> tuple[Path | None, str]:
    """(the path inside the plugin, "") or (None, why it cannot be used)."""
    if Path(entry).is_absolute():
        return None, "must be relative to the plugin's folder"
    target = (root / entry).resolve()
    if not target.is_relative_to(root.resolve()):
        return None, "points outside the plugin's folder"
    if not target.exists():
        return None, "does not exist"
    return target, ""


def _text(value: Any) -> str:
    return " ".join(str(value).split()) if isinstance(value, (str, int, float)) else ""


def _author(value: Any) -> str:
    if isinstance(value, dict):  # {"name": ..., "email": ..., "url": ...}
        name, email = _text(value.get("name")), _text(value.get("email"))
        return f"{name} <{email}>" if name and email else name or email
    return _text(value)
