"""Where a directory's snapshots go: always a git directory of the agent's own, under
``$AGENT_HOME/checkpoints/``, never the user's repository.

Inside a git repository (kind ``repo``): a bare repository that borrows the user's objects through
``objects/info/alternates`` (so a snapshot hashes only what git does not have already) and keeps
its own refs and the objects only a snapshot has (an untracked ``.env.local``). Nothing is
written to the user's repository: ``git push --mirror`` or a mirror clone carries none of it.
Files are listed as the user's index and ignore rules say (read only). Anywhere else (``shadow``):
a bare repository named after the directory, with the directory as its work tree. Kind ``git``
(snapshots kept under ``refs/agent/`` in the user's repository by earlier versions) is still read.
"""

from __future__ import annotations

import hashlib
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent_cli import home_budget
from agent_cli.checkpoints.gitcmd import CheckpointError, Git
from agent_cli.sandbox.git_config import Unparsed, parse

REF_PREFIX = "refs/agent/checkpoints/"


SOURCE_FILE = "agent-gitdir"  # in a "repo" store: the user's git directory it reads from


@dataclass(frozen=True, slots=True)
class Store:
    kind: str  # "repo" (borrowing a repository's objects), "shadow", or "git" (earlier versions)
    git_dir: Path  # where snapshots are written
    work_tree: Path
    source: Path | None = None  # the user's git directory (its index, ignore rules, objects)

    @classmethod
    def of(cls, kind: str, git_dir: Path, work_tree: Path) -> Store:
        """A store as a session file names it."""
        if kind != "repo":
            return cls(kind, Path(git_dir), Path(work_tree), Path(git_dir) if kind == "git" else None)
        try:
            source = Path((Path(git_dir) / SOURCE_FILE).read_text(encoding="utf-8").strip())
        except OSError:
            source = None
        return cls(kind, Path(git_dir), Path(work_tree), source)

    def lister(self, deadline=None) -> Git:
        """git reading the user's index and ignore rules (never writing)."""
        return Git(self.source or self.git_dir, self.work_tree, None, deadline)

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
        return _borrowing(*found, agent_home, create)
    if cwd == Path(cwd.anchor) or cwd == Path.home().resolve():
        raise CheckpointError(f"no checkpoints outside a git repository in {cwd} (too much to snapshot)", refused=True)
    shadow = checkpoints_dir(agent_home) / f"{directory_key(cwd)}.git"
    if not (shadow / "HEAD").exists():
        if not create:
            raise CheckpointError(f"no checkpoints were ever taken in {cwd}")
        _init_bare(shadow, cwd)
    home_budget.keep(shadow)
    return Store("shadow", shadow, cwd)


def _init_bare(shadow: Path, work_tree: Path, object_format: str | None = None) -> None:
    shadow.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    env = {k: v for k, v in Git(shadow, work_tree).env().items() if k not in ("GIT_DIR", "GIT_WORK_TREE")}
    formats = [f"--object-format={object_format}"] if object_format else []  # only when not sha1: old gits
    done = subprocess.run(
        ["git", "init", "--quiet", "--bare", *formats, str(shadow)],
        env=env,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=30,
    )
    if done.returncode != 0:
        raise CheckpointError(
            f"cannot create the shadow repository {shadow}: {done.stderr.decode(errors='replace').strip()}"
        )
    (shadow / "agent-workdir").write_text(str(work_tree) + "\n", encoding="utf-8")  # which directory it shadows


def _borrowing(git_dir: Path, top: Path, objects: Path, agent_home: Path, create: bool) -> Store:
    """The agent's git directory for the repository at ``top``: its own refs and new objects, the
    repository's objects borrowed (read only)."""
    shadow = checkpoints_dir(agent_home) / f"repo-{directory_key(top)}.git"
    if not (shadow / "HEAD").exists():
        if not create:
            raise CheckpointError(f"no checkpoints were ever taken in {top}")
        _init_bare(shadow, top, _object_format(objects.parent / "config"))
    alternates = shadow / "objects" / "info" / "alternates"
    if _read(alternates) != f"{objects}\n":
        alternates.write_text(f"{objects}\n", encoding="utf-8")
    if _read(shadow / SOURCE_FILE) != f"{git_dir}\n":
        (shadow / SOURCE_FILE).write_text(f"{git_dir}\n", encoding="utf-8")
    home_budget.keep(shadow)  # this session's checkpoints are never removed for disk space
    return Store("repo", shadow, top, git_dir)


def _object_format(config: Path) -> str | None:
    """The repository's object format when it is not git's default (SHA-1): the store must match."""
    try:
        entries = parse(config.read_text(encoding="utf-8", errors="replace"), config)
    except (OSError, Unparsed):
        return None
    found = [e.value for e in entries if e.section == "extensions" and e.key == "objectformat" and e.value]
    return found[-1].lower() if found and found[-1].lower() != "sha1" else None


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except OSError:
        return None


def _repository(cwd: Path) -> tuple[Path, Path, Path] | None:
    """(git dir, top level, object directory) of the work tree ``cwd`` is in, or None (no git, a
    bare repo, no repo)."""
    probe = Git(Path("."), cwd)  # only its environment: GIT_DIR is dropped below
    env = {name: value for name, value in probe.env().items() if name not in ("GIT_DIR", "GIT_WORK_TREE")}
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--absolute-git-dir", "--show-toplevel", "--git-path", "objects"],
            cwd=cwd,
            env=env,
            capture_output=True,
            stdin=subprocess.DEVNULL,
            timeout=30,
        )
    except (FileNotFoundError, subprocess.TimeoutExpired):
        return None
    lines = done.stdout.decode("utf-8", "surrogateescape").splitlines()
    if done.returncode != 0 or len(lines) < 3 or not lines[1]:
        return None
    return Path(lines[0]), Path(lines[1]), (cwd / lines[2]).resolve()
