"""Names of sessions (``/rename``, ``agent sessions rename``): with several sessions side by side,
one in each worktree, a name says which is which better than an id.

Names live in one small file, ``$AGENT_HOME/sessions/names.json`` (id -> name), not in the session
files: a running session holds its file's lock, and renaming it from another terminal must work.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from agent_cli.store.rollout import sessions_root

NAMES_FILE = "names.json"
MAX_NAME_CHARS = 80


def names_path(agent_home: Path) -> Path:
    return sessions_root(agent_home) / NAMES_FILE


def session_names(agent_home: Path) -> dict[str, str]:
    """Every named session: id -> name (an unreadable file counts as none)."""
    try:
        data = json.loads(names_path(agent_home).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items() if isinstance(v, str)} if isinstance(data, dict) else {}


def check_session_name(name: str) -> str:
    """``name`` made one line; ValueError when it is empty or too long."""
    name = " ".join(name.split())
    if not name:
        raise ValueError("a session name cannot be empty")
    if len(name) > MAX_NAME_CHARS:
        raise ValueError(f"a session name has at most {MAX_NAME_CHARS} characters")
    return name


def set_session_name(agent_home: Path, session_id: str, name: str | None) -> None:
    """Name the session ``session_id`` (None: forget its name)."""
    names = session_names(agent_home)
    if name is None:
        names.pop(session_id, None)
    else:
        names[session_id] = check_session_name(name)
    path = names_path(agent_home)
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    temporary = path.with_suffix(f".{os.getpid()}.tmp")
    temporary.write_text(json.dumps(names, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
    os.replace(temporary, path)  # another agent reading it never sees half a file
