"""Running git for worktrees: a clean environment, no hooks, no pager, a time limit.

The repository's hooks never run here: ``git worktree add`` would run a ``post-checkout`` hook, and
a hooks folder the repository names (``core.hooksPath = .husky``) is something a model can write.
What a new worktree needs is the set-up command of ``[worktree]``, run like any command.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

TIMEOUT_S = 300  # a checkout of a large repository, or submodules being cloned
# A caller's environment (a git hook running the agent) may point git at another repository.
INHERITED = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
)
NO_HOOKS = ("-c", f"core.hooksPath={os.devnull}")


class GitError(Exception):
    """A git command failed; the message is meant for the user."""


def git_env() -> dict[str, str]:
    env = {name: value for name, value in os.environ.items() if name not in INHERITED}
    env.update(GIT_TERMINAL_PROMPT="0", GIT_PAGER="cat", LC_ALL="C")
    return env


def run(cwd: Path, *args: str, check: bool = True, timeout: float = TIMEOUT_S) -> subprocess.CompletedProcess[str]:
    """``git ARGS`` in ``cwd``; raises :class:`GitError` with git's own message when it fails."""
    try:
        done = subprocess.run(
            ["git", *NO_HOOKS, *args],
            cwd=cwd,
            env=git_env(),
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=timeout,
        )
    except FileNotFoundError:
        raise GitError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"git {args[0]} took longer than {timeout:.0f} s") from None
    if check and done.returncode != 0:
        message = (done.stderr or done.stdout).strip().splitlines()
        raise GitError(f"git {' '.join(args[:2])}: {message[-1] if message else f'exit {done.returncode}'}")
    return done


def output(cwd: Path, *args: str) -> str:
    return run(cwd, *args).stdout.strip()
