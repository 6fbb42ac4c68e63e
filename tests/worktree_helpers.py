"""Real git repositories for the worktree tests: a committed repository, and its state."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}


def git(cwd: Path, *args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        ["git", *args],
        cwd=cwd,
        env={**os.environ, **IDENTITY, **(env or {})},
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def committed_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at ``path`` with ``files`` (default: one README) in its first commit on main."""
    path.mkdir(parents=True, exist_ok=True)
    git(path, "init", "-q", "-b", "main")
    for name, text in (files or {"README.md": "hello\n"}).items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    git(path, "add", "-A")
    git(path, "commit", "-q", "-m", "first")
    return path


def checkout_state(repo: Path) -> tuple[str, bytes, str, str]:
    """What must not change in the user's checkout: HEAD's branch, the index file's bytes, the
    status and the commit of HEAD."""
    return (
        git(repo, "symbolic-ref", "HEAD"),
        (repo / ".git" / "index").read_bytes(),
        git(repo, "status", "--porcelain", "--untracked-files=all"),
        git(repo, "rev-parse", "HEAD"),
    )


def agent_branches(repo: Path) -> list[str]:
    return [line.strip("*+ ") for line in git(repo, "branch", "--list", "agent/*").splitlines()]
