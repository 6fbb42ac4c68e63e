"""Worktrees that went stale: a folder whose git metadata is gone or belongs to another repository.

A repository deleted and cloned again at the same path keeps its worktrees' records (they sit under
``$AGENT_HOME``, keyed by the path) and folders, but the new clone knows nothing of them: the
folder's ``.git`` file points at a ``.git/worktrees/NAME`` that no longer exists, or at one the new
repository made for a worktree of its own elsewhere. A session started there would run, and its
change would end up in no repository. Such a worktree is never used: it is set aside (its folder
renamed, nothing deleted) and a fresh one is made in its place, with a warning that says where the
old folder went. Read from files alone, no git: it runs before every resume.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path

from agent_cli.worktrees.store import Repository, Worktree, forget, in_use, repository_folder

GITDIR_PREFIX = "gitdir:"


def stale_reason(worktree: Worktree, repository: Repository) -> str | None:
    """Why the folder of ``worktree`` is no worktree of ``repository`` any more; None when it is one."""
    dot_git = worktree.path / ".git"
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except IsADirectoryError:
        return f"{worktree.path} holds a repository of its own, not a worktree"
    except (OSError, UnicodeDecodeError):
        return f"{worktree.path} has no .git file"
    if not text.startswith(GITDIR_PREFIX):
        return f"{dot_git} does not name a git directory"
    gitdir = (worktree.path / text[len(GITDIR_PREFIX) :].strip()).resolve()
    if not gitdir.is_dir():
        return f"its git directory {gitdir} is gone (the repository was deleted or cloned again)"
    common = _read_path(gitdir / "commondir", gitdir)
    if common is None or common != repository.common.resolve():
        return f"its git directory {gitdir} belongs to another repository"
    if _read_path(gitdir / "gitdir", gitdir) != dot_git.resolve():
        return f"its git directory {gitdir} belongs to another worktree of the repository"
    return None


def _read_path(file: Path, relative_to: Path) -> Path | None:
    try:
        return (relative_to / file.read_text(encoding="utf-8").strip()).resolve()
    except (OSError, UnicodeDecodeError):
        return None


def set_aside(agent_home: Path, worktree: Worktree) -> Path | None:
    """Forget the stale ``worktree`` (its record, its lock) and rename its folder to
    ``NAME.stale-DATE`` beside it, so its name is free and nothing in it is lost. Returns where the
    folder went (None: it was empty and is gone). Refuses (ValueError) while an agent works there."""
    if in_use(agent_home, worktree):
        raise ValueError(f"worktree {worktree.name} is stale but another running agent works in it; it stays")
    moved: Path | None = None
    if worktree.path.is_dir():
        if any(entry.name != ".git" for entry in worktree.path.iterdir()):
            stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
            moved = _free_path(repository_folder(agent_home, worktree.repository) / f"{worktree.name}.stale-{stamp}")
            os.replace(worktree.path, moved)
        else:
            (worktree.path / ".git").unlink(missing_ok=True)
            worktree.path.rmdir()
    forget(agent_home, worktree)
    return moved


def _free_path(path: Path) -> Path:
    candidate, number = path, 1
    while candidate.exists():
        number += 1
        candidate = path.with_name(f"{path.name}-{number}")
    return candidate


def aside_warning(worktree: Worktree, reason: str, moved: Path | None) -> str:
    where = f"its folder was moved to {moved}" if moved is not None else "its folder was empty and is gone"
    return f"worktree {worktree.name} was stale ({reason}): made it fresh; {where}"
