"""The repository a task runs in, on the machine that runs it.

A path that is a git checkout here is used as it is (its worktrees go beside the user's own, as
`agent exec --worktree` makes them). A git URL, or a path that this machine (a Ray node) does not
have, is cloned once into ``$AGENT_HOME/batch/clones/`` and reused by the tasks that follow: from
the URL, or from a bundle of the driver's repository that travels with the task. A URL reaches
git after ``--`` (tasks.py refuses one that starts with ``-``): never as an option such as
``--upload-pack``, which git runs as a command.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import re
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

from agent_cli.worktrees.git import GitError, output, run

CLONES = Path("batch") / "clones"  # under $AGENT_HOME


def is_checkout(path: Path) -> bool:
    return path.is_dir() and run(path, "rev-parse", "--is-inside-work-tree", check=False).stdout.strip() == "true"


def clone_folder(agent_home: Path, source: str) -> Path:
    digest = hashlib.sha256(source.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    stem = re.sub(r"[^A-Za-z0-9._-]+", "_", source.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")) or "repo"
    return agent_home / CLONES / f"{stem}-{digest}"


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """One process at a time clones into ``path`` (tasks of one batch start together)."""
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def checkout_for(
    repo: str, agent_home: Path, is_url: bool, bundle: Callable[[], bytes] | None = None, commit: str | None = None
) -> Path:
    """A checkout of ``repo`` on this machine; GitError saying why there is none. ``commit``: the
    commit the task starts from, which a clone made earlier may not have yet (fetched then)."""
    if not is_url and is_checkout(Path(repo)):
        return Path(repo)
    if not is_url and bundle is None:
        raise GitError(f"{repo} is not a git repository on this machine")
    folder = clone_folder(agent_home, repo)
    with locked(folder):
        if is_checkout(folder):
            if commit and not has_commit(folder, commit):
                fetch(folder, repo if is_url else None, bundle)
            return folder
        if is_url:
            run(agent_home, "clone", "--quiet", "--no-checkout", "--", repo, str(folder))
        else:
            assert bundle is not None
            with bundle_file(bundle()) as path:
                run(agent_home, "clone", "--quiet", "--no-checkout", "--", str(path), str(folder))
        run(folder, "checkout", "--quiet", "--detach", check=False)
    return folder


def has_commit(folder: Path, commit: str) -> bool:
    return run(folder, "cat-file", "-e", f"{commit}^{{commit}}", check=False).returncode == 0


def fetch(folder: Path, url: str | None, bundle: Callable[[], bytes] | None) -> None:
    if url is not None:
        run(folder, "fetch", "--quiet", "--", url, "+refs/heads/*:refs/remotes/origin/*")
    elif bundle is not None:
        with bundle_file(bundle()) as path:
            run(folder, "fetch", "--quiet", "--", str(path), "+refs/*:refs/remotes/driver/*")


@contextlib.contextmanager
def bundle_file(data: bytes) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="agent-batch-bundle-") as folder:
        path = Path(folder) / "repo.bundle"
        path.write_bytes(data)
        yield path


def make_bundle(checkout: Path) -> bytes:
    """Every ref of the driver's repository in one file, for nodes that do not have it."""
    with tempfile.TemporaryDirectory(prefix="agent-batch-bundle-") as folder:
        path = Path(folder) / "repo.bundle"
        run(checkout, "bundle", "create", "--quiet", str(path), "--all")
        return path.read_bytes()


def resolve_base(checkout: Path, base: str | None) -> str:
    """The commit ``base`` (default HEAD) names in ``checkout`` (also as ``origin/BASE`` in a clone)."""
    for name in (base or "HEAD", f"origin/{base}" if base else None):
        if name is not None:
            with contextlib.suppress(GitError):
                return output(checkout, "rev-parse", "--verify", "--quiet", f"{name}^{{commit}}")
    what = f"base {base!r}" if base else "HEAD"
    raise GitError(f"{what} does not name a commit in {checkout}")
