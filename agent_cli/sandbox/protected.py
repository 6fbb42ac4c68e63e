"""Paths that stay read-only inside the sandbox even beneath a writable root, whether or not
they exist yet: what the agent, Claude Code or git load and run later (``.agent/``, ``.claude/``,
``.mcp.json``, ``.git/`` of the workspace and of nested repositories).

A mount can only cover a path that exists, so a missing one gets an empty placeholder folder
for as long as sandboxed commands run; it is removed when the last one ends, if it is still
empty. A folder even for ``.mcp.json``: git shows no empty folder (a model running ``git status``
sees nothing new), and readers of ``.mcp.json`` skip what is not a file. ``AGENTS.md`` is text the model reads, not code: writable.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import stat
import threading
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from agent_cli.sandbox.guard import mount_paths, protected_paths

PROTECTED_NAMES = (".git", ".agent", ".claude", ".mcp.json")
_lock = threading.Lock()
_holders = 0
_placeholders: dict[Path, int] = {}  # path -> inode of the placeholder we made


def protected_part(path: Path, roots: Iterable[Path]) -> Path | None:
    """The protected path (``<root>/.../.git`` and the like) that ``path`` is or lies in."""
    for root in roots:
        if path == root or not path.is_relative_to(root):
            continue
        parts = path.relative_to(root).parts
        for index, part in enumerate(parts):
            if part in PROTECTED_NAMES:
                return root.joinpath(*parts[: index + 1])
    return None


def read_only_paths(workspace_roots: Iterable[Path], all_roots: Iterable[Path]) -> list[str]:
    """What to mount read-only: the protected names at each writable root, and what
    guard.py adds (nested ``.git`` at any depth, git hooks and config, dotfiles)."""
    workspace_roots, all_roots = list(workspace_roots), list(all_roots)
    paths: list[Path] = [root / name for root in all_roots for name in PROTECTED_NAMES]
    listed = [str(p) for p in dict.fromkeys(paths) if os.path.lexists(p) and not os.path.islink(p)]
    return list(dict.fromkeys(listed + mount_paths(protected_paths(workspace_roots, all_roots), all_roots)))


@contextlib.contextmanager
def placeholders(workspace_roots: Iterable[Path]) -> Iterator[None]:
    """Missing protected paths exist (empty) while this is held by any sandboxed command."""
    release = hold(workspace_roots)
    try:
        yield
    finally:
        release()


def hold(workspace_roots: Iterable[Path]) -> Callable[[], None]:
    """Make the missing protected paths exist until the returned release is called (once for a
    command; when its session closes for a background command, which outlives its call: removing
    a placeholder under a running sandbox would unmount it there)."""
    global _holders
    with _lock:
        _holders += 1
        for root in workspace_roots:
            if root.is_dir():
                for name in PROTECTED_NAMES:
                    _make(root / name)
    released = False

    def release() -> None:
        global _holders
        nonlocal released
        with _lock:
            if released:
                return
            released = True
            _holders -= 1
            if _holders == 0:
                _remove_all()

    return release


def _make(path: Path) -> None:
    if os.path.lexists(path):
        return
    with contextlib.suppress(OSError):  # a root we cannot write to: nothing can be planted there
        path.mkdir(mode=0o755)
        _placeholders[path] = os.lstat(path).st_ino


def _remove_all() -> None:
    for path, inode in list(_placeholders.items()):
        del _placeholders[path]
        with contextlib.suppress(OSError):
            info = os.lstat(path)
            if info.st_ino != inode:
                continue  # replaced since: not ours
            if stat.S_ISDIR(info.st_mode):
                path.rmdir()  # fails if something was put in it: then it is the user's


@atexit.register
def _clean_at_exit() -> None:
    with _lock:
        _remove_all()
