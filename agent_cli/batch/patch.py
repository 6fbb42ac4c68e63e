"""The change a task made, as one patch: from the commit its worktree was made from to what is in
the folder now (its commits, uncommitted edits and new files; not what .gitignore ignores).

New files are seen through a copy of the worktree's index, so the worktree's own index, and what
`git status` shows the user there, stay as the agent left them.
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from pathlib import Path

from agent_cli.worktrees.git import NO_HOOKS, TIMEOUT_S, GitError, git_env


def git(worktree: Path, *args: str, index: Path | None = None) -> str:
    env = git_env()
    if index is not None:
        env["GIT_INDEX_FILE"] = str(index)
    done = subprocess.run(
        ["git", *NO_HOOKS, *args],
        cwd=worktree,
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=TIMEOUT_S,
        check=False,
    )
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise GitError(f"git {args[0]}: {message[-1] if message else f'exit {done.returncode}'}")
    return done.stdout.decode("utf-8", "surrogateescape")


def patch_of(worktree: Path, base: str) -> str:
    """``git diff --binary BASE`` of everything in ``worktree``, new files included ('' when none)."""
    own_index = index_of(worktree) or Path(
        git(worktree, "rev-parse", "--path-format=absolute", "--git-path", "index").strip()
    )
    with tempfile.TemporaryDirectory(prefix="agent-batch-") as folder:
        index = Path(folder) / "index"
        if own_index.is_file():
            shutil.copyfile(own_index, index)
        git(worktree, "add", "--all", index=index)
        return git(worktree, "diff", "--cached", "--binary", base or empty_tree(worktree), index=index)


def index_of(worktree: Path) -> Path | None:
    """A worktree's index, read from its ``.git`` file (``gitdir: …``) without running git."""
    try:
        text = (worktree / ".git").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    return (worktree / text.removeprefix("gitdir:").strip()) / "index"


def empty_tree(worktree: Path) -> str:
    return git(worktree, "hash-object", "-t", "tree", "/dev/null").strip()
