"""API keys stored under the agent's home (``auth.json``, mode 0600), by environment variable
name: a key in the environment always wins over a stored one."""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_cli.paths import agent_home, open_private

AUTH_FILE = "auth.json"


def auth_path(home: Path | None = None) -> Path:
    return (home or agent_home()) / AUTH_FILE


def stored_keys(home: Path | None = None) -> dict[str, str]:
    """{ENV_NAME: key} from auth.json; {} when there is none or it cannot be read."""
    try:
        data = json.loads(auth_path(home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    keys = data.get("keys") if isinstance(data, dict) else None
    if not isinstance(keys, dict):
        return {}
    return {name: value for name, value in keys.items() if isinstance(value, str) and value.strip()}


def stored_key(env_key: str, home: Path | None = None) -> str | None:
    return stored_keys(home).get(env_key)


def store_key(env_key: str, key: str, home: Path | None = None) -> Path:
    """Save ``key`` as the one for ``env_key``; the file is readable by its owner only."""
    keys = {**stored_keys(home), env_key: key.strip()}
    return _write(keys, home)


def remove_keys(env_key: str | None = None, home: Path | None = None) -> list[str]:
    """Forget the key for ``env_key`` (every key with None); the names removed."""
    keys = stored_keys(home)
    removed = [name for name in keys if env_key is None or name == env_key]
    if removed:
        _write({name: value for name, value in keys.items() if name not in removed}, home)
    return removed


def _write(keys: dict[str, str], home: Path | None) -> Path:
    path = auth_path(home)
    with open_private(path, "w") as handle:
        json.dump({"keys": keys}, handle, indent=2)
        handle.write("\n")
    os.chmod(path, 0o600)  # an older file made with a looser mode is tightened too
    return path
