"""Running git for checkpoints: a clean environment, a deadline, no pager, no hooks, no signing."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Mapping
from pathlib import Path

# Variables a caller's environment may carry (a git hook running the agent, a user's GIT_DIR)
# that would point our commands at another repository or index (worktrees/git.py drops them too).
INHERITED_GIT = (
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_COMMON_DIR",
    "GIT_NAMESPACE",
    "GIT_PREFIX",
    "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS",
)
_IDENTITY = {
    "GIT_AUTHOR_NAME": "agent-cli",
    "GIT_AUTHOR_EMAIL": "agent-cli@localhost",
    "GIT_COMMITTER_NAME": "agent-cli",
    "GIT_COMMITTER_EMAIL": "agent-cli@localhost",
}
_CONFIG = (
    "-c",
    "commit.gpgSign=false",
    "-c",
    "core.quotePath=off",
    "-c",
    "color.ui=never",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "gc.auto=0",
)


class CheckpointError(Exception):
    """A snapshot or restore that could not be done. The message is meant for the user.
    ``too_slow``: the time limit ran out; ``refused``: this directory is never snapshotted."""

    def __init__(self, message: str, too_slow: bool = False, refused: bool = False):
        super().__init__(message)
        self.too_slow, self.refused = too_slow, refused


class Deadline:
    """The time a snapshot or restore may still take (its git commands share it)."""

    def __init__(self, seconds: float | None):
        self.end = None if seconds is None else time.monotonic() + seconds

    def left(self) -> float | None:
        if self.end is None:
            return None
        left = self.end - time.monotonic()
        if left <= 0:
            raise CheckpointError("the time limit ran out", too_slow=True)
        return left


class Git:
    """git with a fixed repository (``git_dir``), work tree and optional index file."""

    def __init__(self, git_dir: Path, work_tree: Path, index: Path | None = None, deadline: Deadline | None = None):
        self.git_dir, self.work_tree, self.index = Path(git_dir), Path(work_tree), index
        self.deadline = deadline or Deadline(None)

    def with_index(self, index: Path | None) -> Git:
        return Git(self.git_dir, self.work_tree, index, self.deadline)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = {name: value for name, value in os.environ.items() if name not in INHERITED_GIT}
        env.update(_IDENTITY)
        env.update(
            GIT_DIR=str(self.git_dir),
            GIT_WORK_TREE=str(self.work_tree),
            GIT_LITERAL_PATHSPECS="1",
            GIT_OPTIONAL_LOCKS="0",
            GIT_TERMINAL_PROMPT="0",
            LC_ALL="C",
        )
        if self.index is not None:
            env["GIT_INDEX_FILE"] = str(self.index)
        env.update(extra or {})
        return env

    def run(self, *args: str, input: bytes | None = None, check: bool = True) -> bytes:
        try:
            done = subprocess.run(
                ["git", *_CONFIG, *args],
                cwd=self.work_tree,
                env=self.env(),
                input=input,
                stdin=None if input is not None else subprocess.DEVNULL,
                capture_output=True,
                timeout=self.deadline.left(),
            )
        except FileNotFoundError:
            raise CheckpointError("git is not installed (or not on PATH)") from None
        except subprocess.TimeoutExpired:
            raise CheckpointError(f"`git {args[0]}` did not finish within the time limit", too_slow=True) from None
        if check and done.returncode != 0:
            reason = done.stderr.decode("utf-8", "replace").strip().splitlines()
            raise CheckpointError(f"`git {args[0]}` failed: {reason[-1] if reason else f'exit {done.returncode}'}")
        return done.stdout

    def text(self, *args: str) -> str:
        return self.run(*args).decode("utf-8", "surrogateescape").strip()


def nul_list(data: bytes) -> list[str]:
    return [part.decode("utf-8", "surrogateescape") for part in data.split(b"\0") if part]


def nul_join(paths: list[str]) -> bytes:
    return b"".join(path.encode("utf-8", "surrogateescape") + b"\0" for path in paths)
