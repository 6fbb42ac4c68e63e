"""A git repository that appeared in the workspace during the session loses what would make the
user's git run a program: config keys outside a short list known to run nothing (git_config.py),
hooks that are not ``*.sample``, a ``commondir`` link, and a ``.git`` symbolic link or a ``.git``
file pointing at a git directory the sandbox does not protect. What is taken out is moved to a
quarantine folder under the agent's home (nothing is lost), and each removal is reported.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from agent_cli.sandbox.git_config import Entry, Unparsed, git_dirs, parse


def quarantine(path: Path, folder: Path) -> str:
    """Move ``path`` under ``folder`` (deleted when it cannot be moved); says where it went."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = folder / stamp / str(path).lstrip("/")
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        shutil.move(str(path), str(target))
        return f"moved to {target}"
    except OSError:
        with contextlib.suppress(OSError):
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()
        return "deleted"


def sanitize(dot_git: Path, folder: Path, protected: Callable[[Path], bool]) -> list[str]:
    """Refusals made to the repository at ``dot_git`` (new this session), one line each.
    ``protected(path)``: whether the sandbox already keeps ``path`` read-only."""
    if dot_git.is_symlink():
        return [f"{dot_git} (a symbolic link to a git directory) {quarantine(dot_git, folder)}"]
    if dot_git.is_file():
        targets = git_dirs(dot_git)
        if targets and all(protected(target) for target in targets):
            return []
        return [f"{dot_git} (points git at an unprotected directory) {quarantine(dot_git, folder)}"]
    if not dot_git.is_dir():
        return []
    refused: list[str] = []
    if os.path.lexists(dot_git / "commondir"):
        refused.append(f"{dot_git / 'commondir'} {quarantine(dot_git / 'commondir', folder)}")
    for name in ("config", "config.worktree"):
        refused += _config(dot_git / name, folder)
    hooks = dot_git / "hooks"
    if hooks.is_symlink() or (os.path.lexists(hooks) and not hooks.is_dir()):
        refused.append(f"{hooks} {quarantine(hooks, folder)}")
    elif hooks.is_dir():
        for hook in sorted(hooks.iterdir()):
            if not (hook.name.endswith(".sample") and hook.is_file() and not hook.is_symlink()):
                refused.append(f"hook {hook} {quarantine(hook, folder)}")
    return refused


def _config(path: Path, folder: Path) -> list[str]:
    if not os.path.lexists(path):
        return []
    if path.is_symlink() or not path.is_file():
        return [f"{path} {quarantine(path, folder)}"]
    text = path.read_text(encoding="utf-8", errors="surrogateescape")
    try:
        entries = parse(text, path)
    except Unparsed:
        entries = None
    if entries is not None and all(entry.safe() for entry in entries):
        return []
    kept = [entry for entry in entries or () if entry.safe()]
    removed = sorted({entry.name for entry in entries or () if not entry.safe()}) or ["lines git reads otherwise"]
    where = quarantine(path, folder)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.write(render(kept))
    return [f"{path}: removed {', '.join(removed)} (the original {where})"]


def render(entries: list[Entry]) -> str:
    """Entries as a config file git reads back the same."""
    lines: list[str] = []
    current: tuple[str, str | None] | None = None
    for entry in entries:
        if (entry.section, entry.subsection) != current:
            current = (entry.section, entry.subsection)
            sub = entry.subsection
            lines.append(f"[{entry.section}]" if sub is None else f'[{entry.section} "{_escape(sub)}"]')
        lines.append(f"\t{entry.key}" if entry.value is None else f'\t{entry.key} = "{_escape(entry.value)}"')
    return "".join(line + "\n" for line in lines)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
