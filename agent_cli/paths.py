"""Where the agent's own files live: the user's $AGENT_HOME and the bundled prompts and skills."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

import agent_cli

_PACKAGE_DIR = Path(agent_cli.__file__).resolve().parent


def agent_home() -> Path:
    """The user's agent folder: ``$AGENT_HOME`` or ``~/.agent``."""
    return Path(os.environ.get("AGENT_HOME") or Path.home() / ".agent").expanduser()


def _bundled_dir(kind: str) -> Path:
    # A wheel carries the files as package data; a source checkout or editable install keeps
    # them at the repository's top level, next to the package.
    for candidate in (_PACKAGE_DIR / "bundled" / kind, _PACKAGE_DIR / "data" / kind):
        if candidate.is_dir():
            return candidate
    return _PACKAGE_DIR.parent / kind


def bundled_prompts_dir() -> Path:
    return _bundled_dir("prompts")


def bundled_skills_dir() -> Path:
    return _bundled_dir("skills")


@overload
def open_private(path: Path, mode: Literal["wb", "ab"] = "wb") -> BinaryIO: ...
@overload
def open_private(path: Path, mode: Literal["w", "a"]) -> TextIO: ...
def open_private(path: Path, mode: str = "wb") -> IO[Any]:
    """Create (or truncate) ``path`` readable by its owner only: it may hold secrets."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if mode.startswith("a") else os.O_TRUNC)
    descriptor = os.open(path, flags, 0o600)
    return open(descriptor, mode) if "b" in mode else open(descriptor, mode, encoding="utf-8")
