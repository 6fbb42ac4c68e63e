"""Where a directory's snapshots go.

Inside a git repository: the repository's own object store, each snapshot a commit on a private
ref under ``refs/agent/checkpoints/`` (so ``git gc`` keeps it and no branch, tag or stash shows
it). Anywhere else: a bare shadow repository under ``$AGENT_HOME/checkpoints/`` named after the
directory, with the directory as its work tree.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent_cli.checkpoints.gitcmd import CheckpointError, Git

REF_PREFIX = "refs/agent/checkpoints/"


@dataclass(frozen=True, slots=True)
class Store:
    kind: str  # "git" (the user's repository) or "shadow"
    git_dir: Path
    work_tree: Path

    def git(self, index: Path | None = None, deadline=None) -> Git:
        return Git(self.git_dir, self.work_tree, index, deadline)

    @property
    def key(self) -> str:
        return directory_key(self.work_tree)


def directory_key(directory: Path) -> str:
    return hashlib.sha256(str(Path(directory).resolve()).encode("utf-8", "surrogateescape")).hexdigest()[:16]


def checkpoints_dir(agent_home: Path) -> Path:
    return Path(agent_home) / "checkpoints"


def locate(cwd: Path, agent_home: Path, create: bool = True) -> Store:
    """The store for ``cwd``: its repository when it is in one, else its shadow repository."""
    cwd = Path(cwd).resolve()
    found = _repository(cwd)
    if found is not None:
        return Store("git", *found)
    if cwd == Path(cwd.anchor) or cwd == Path.home().resolve():
        raise CheckpointError(f"no checkpoints outside a git repository in {cwd} (too much to snapshot)", refused=True)
    shadow = checkpoints_dir(agent_home) / f"{directory_key(cwd)}.git"
    if not (shadow / "HEAD").exists():
        if not create:
            raise CheckpointError(f"no checkpoints were ever taken in {cwd}")
        shadow.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        env = {k: v for k, v in Git(shadow, cwd).env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
        done = subprocess.run(
            ["git", "init", "--quiet", "--bare", str(shadow)],
            env=env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
        if done.returncode != 0:
            raise CheckpointError(
                f"cannot create the shadow repository {shadow}: {done.stderr.decode(errors='replace').strip()}"
            )
        (shadow / "agent-workdir").write_text(str(cwd) + "\n", encoding="utf-8")  # which directory it shadows
    return Store("shadow", shadow, cwd)


def _repository(cwd: Path) -> tuple[Path, Path] | None:
    """(git dir, top level) of the work tree ``cwd`` is in, or None (no git, a bare repo, no repo)."""
    probe = Git(Path("."), cwd)  # only its environment: GIT_DIR is dropped below
    env = {name: value for name, value in probe.env().items() if name not in ("GIT_DIR", "GIT_WORK_TREE")}
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir", "--show-toplevel"],
            cwd=cwd,
            env=env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    if done.returncode != 0 or len(lines) < 2 or not lines[1]:
        return None
    return Path(lines[0]), Path(lines[1])
