"""Fixture plugins in Claude Code's format, written by the tests that use them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_plugin(
    root: Path, name: str, files: dict[str, str | dict[str, Any]], manifest: dict | str | None = None
) -> Path:
    """A plugin folder: ``.claude-plugin/plugin.json`` (``manifest``, default ``{"name": name}``;
    a string is written as is) plus ``files`` (relative path -> text, or an object written as JSON)."""
    folder = root / name
    (folder / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    manifest = {"name": name, "version": "1.0.0", "description": f"the {name} plugin"} if manifest is None else manifest
    text = manifest if isinstance(manifest, str) else json.dumps(manifest)
    (folder / ".claude-plugin" / "plugin.json").write_text(text)
    for relative, content in files.items():
        path = folder / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content if isinstance(content, str) else json.dumps(content))
        if relative.endswith(".sh"):
            path.chmod(0o755)
    return folder


def hooks_json(event: str, command: str, matcher: str | None = None, **extra: Any) -> dict[str, Any]:
    """Claude Code's hooks.json with one command hook."""
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, **extra}]}
    if matcher is not None:
        group["matcher"] = matcher
    return {"description": "test hooks", "hooks": {event: [group]}}
