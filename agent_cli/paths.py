"""Where the agent's own files live: the user's $AGENT_HOME, the bundled prompts and skills, and
the warm exec server's socket folder (which the sandbox masks: sandbox/policy.py)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import IO, Any, BinaryIO, Literal, TextIO, overload

import agent_cli

_PACKAGE_DIR = Path(agent_cli.__file__).resolve().parent


def agent_home() -> Path:
    """The user's agent folder: ``$AGENT_HOME`` or ``~/.agent``."""
    return Path(os.environ.get("AGENT_HOME") or Path.home() / ".agent").expanduser()


def warm_server_dir() -> Path:
    """The warm exec server's folder (agent_cli/warm/): ``$XDG_RUNTIME_DIR/agent-cli-UID``, else
    ``$AGENT_HOME/run``; never a temp folder, which every workspace-write sandbox may write."""
    runtime = os.environ.get("XDG_RUNTIME_DIR")
    if runtime and os.path.isabs(runtime):
        return Path(runtime) / f"agent-cli-{os.getuid()}"
    return agent_home() / "run"


def warm_server_dirs() -> list[Path]:
    """Every folder where a warm server of this user may listen: this environment's, the one of a
    launcher without ``XDG_RUNTIME_DIR``, and ``/tmp``'s, where earlier versions put theirs."""
    found = [warm_server_dir(), agent_home() / "run", Path("/tmp") / f"agent-cli-{os.getuid()}"]
    return list(dict.fromkeys(found))


def private_dir(path: Path) -> bool:
    """Create the socket folder 0700, or check that an existing one is ours and private."""
    try:
        path.mkdir(mode=0o700, exist_ok=True)  # not its parents: a runtime folder is the system's to make
        info = os.lstat(path)
    except OSError:
        return False
    return info.st_uid == os.getuid() and (info.st_mode & 0o777) == 0o700 and not os.path.islink(path)


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
    return open(os.open(path, flags, 0o600), mode, encoding=None if "b" in mode else "utf-8")
