"""Taking a snapshot of a work tree without touching the user's index, HEAD, branches or stash.

The files are the tracked ones plus the untracked ones git does not ignore, as the user's index
and ``.gitignore`` files say (read only). They go into an index file of our own
(``GIT_INDEX_FILE``), kept between snapshots so a later snapshot hashes only what changed; the
tree it writes becomes a commit with no parent, held by a ref under ``refs/agent/`` of the agent's
own git directory (store.py). Files over the
size limit are left out and named. Git keeps only the executable bit, so the commit message
records the exact permission bits of files whose mode is not plain 644 or 755.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.checkpoints.gitcmd import CheckpointError, Deadline, Git, nul_join, nul_list
from agent_cli.checkpoints.store import REF_PREFIX, Store

DEFAULT_MAX_FILE_BYTES = 10 * 1024 * 1024
MESSAGE_TITLE = "agent-cli checkpoint"
EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"


@dataclass(frozen=True)
class TreeState:
    """The work tree at one moment: a git tree, plus what git cannot say."""

    tree: str
    modes: dict[str, int] = field(default_factory=dict)  # permission bits other than 0o644 / 0o755
    skipped: tuple[str, ...] = ()  # paths over the size limit, left out
    files: int = 0


@dataclass(frozen=True)
class Snapshot(TreeState):
    commit: str = ""
    ref: str = ""


def scan(git: Git, store: Store, max_file_bytes: int) -> tuple[list[str], dict[str, int], list[tuple[str, int]]]:
    """(paths to keep, unusual modes, skipped (path, size)) of the work tree now."""
    if store.kind in ("git", "repo"):  # the user's index and ignore rules, only read
        listing = store.lister(git.deadline).run("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    else:
        listing = git.run("ls-files", "-z", "--cached", "--others", "--exclude-standard")
    keep: list[str] = []
    modes: dict[str, int] = {}
    skipped: list[tuple[str, int]] = []
    root = str(store.work_tree)
    for path in dict.fromkeys(nul_list(listing)):  # a conflicted file is listed once per stage
        try:
            info = os.lstat(os.path.join(root, path))
        except OSError:
            continue  # deleted since the user's index knew it
        if stat.S_ISDIR(info.st_mode):
            continue  # a submodule or a nested repository: its own history keeps it
        if stat.S_ISREG(info.st_mode):
            if info.st_size > max_file_bytes:
                skipped.append((path, info.st_size))
                continue
            bits = stat.S_IMODE(info.st_mode)
            if bits not in (0o644, 0o755):
                modes[path] = bits
        elif not stat.S_ISLNK(info.st_mode):
            continue  # sockets, fifos: nothing to keep
        keep.append(path)
    return keep, modes, skipped


def write_tree(git: Git, keep: list[str], seed: Path | None = None) -> str:
    """Bring our index (``git.index``) to exactly ``keep`` and write its tree.

    A new index starts as a copy of ``seed`` (the user's index, only read), so files git already
    hashed are not hashed again; after that only paths that are new, gone, or changed by stat
    data (``git diff-files``) are updated."""
    index = git.index
    if index is not None and not index.exists() and seed is not None and seed.is_file():
        shutil.copy2(seed, index)  # with its mtime: git judges "racily clean" entries the same way
    try:
        return _update_and_write(git, keep)
    except CheckpointError:
        if index is None or not index.exists():
            raise
        index.unlink()  # a seed git cannot use as ours (a split index, say): start from nothing
        return _update_and_write(git, keep)


def _update_and_write(git: Git, keep: list[str]) -> str:
    present = set(nul_list(git.run("ls-files", "-z", "--cached"))) if git.index and git.index.exists() else set()
    wanted = set(keep)
    gone = sorted(present - wanted)
    if gone:
        git.run("update-index", "-z", "--force-remove", "--stdin", input=nul_join(gone))
    changed = set(nul_list(git.run("diff-files", "-z", "--name-only", "--ignore-submodules"))) if present else set()
    update = [path for path in keep if path not in present or path in changed]
    if update:
        git.run("update-index", "-z", "--add", "--remove", "--replace", "--stdin", input=nul_join(update))
    if not keep:
        return EMPTY_TREE
    return git.text("write-tree")


def users_index(store: Store) -> Path | None:
    """The user's index file, to copy from (never written)."""
    return store.source / "index" if store.source is not None else None


def tree_state(store: Store, index: Path, max_file_bytes: int, deadline: Deadline) -> TreeState:
    """The work tree now, as a tree in the store (no commit, no ref)."""
    git = store.git(index, deadline)
    keep, modes, skipped = scan(git, store, max_file_bytes)
    tree = write_tree(git, keep, users_index(store))
    return TreeState(tree, modes, tuple(path for path, _ in skipped), len(keep))


def take_snapshot(
    store: Store, index: Path, name: str, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES, time_limit: float | None = None
) -> tuple[Snapshot, list[tuple[str, int]]]:
    """Snapshot the work tree as ``refs/agent/checkpoints/<name>``; also returns the skipped files
    with their sizes. Raises :class:`CheckpointError`."""
    deadline = Deadline(time_limit)
    git = store.git(index, deadline)
    index.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    keep, modes, skipped = scan(git, store, max_file_bytes)
    tree = write_tree(git, keep, users_index(store))
    note = {"modes": {path: f"{bits:o}" for path, bits in modes.items()}, "skipped": [path for path, _ in skipped]}
    message = f"{MESSAGE_TITLE} {name}\n\n{json.dumps(note, ensure_ascii=False)}\n"
    commit = git.run("commit-tree", tree, input=message.encode("utf-8", "surrogateescape")).decode().strip()
    ref = REF_PREFIX + name
    git.run("update-ref", ref, commit)
    return Snapshot(tree, modes, tuple(note["skipped"]), len(keep), commit, ref), skipped


def read_snapshot(store: Store, commit: str, deadline: Deadline | None = None) -> Snapshot:
    """A snapshot back from its commit (modes and skipped files from its message)."""
    git = store.git(None, deadline)
    try:
        raw = git.run("cat-file", "commit", commit).decode("utf-8", "surrogateescape")
    except CheckpointError:
        raise CheckpointError(f"checkpoint {commit[:12]} is no longer in {store.git_dir}") from None
    header, _, message = raw.partition("\n\n")
    tree = next(line.split()[1] for line in header.splitlines() if line.startswith("tree "))
    note: dict = {}
    body = message.partition("\n\n")[2].strip()
    if message.startswith(MESSAGE_TITLE) and body:
        try:
            note = json.loads(body)
        except ValueError:
            note = {}
    modes = {path: int(bits, 8) for path, bits in dict(note.get("modes", {})).items()}
    return Snapshot(tree, modes, tuple(note.get("skipped", ())), 0, commit, "")


def delete_refs(store: Store, prefix: str) -> None:
    """Drop the refs of one session's checkpoints (their objects go with git's next gc)."""
    git = store.git()
    refs = git.text("for-each-ref", "--format=%(refname)", REF_PREFIX + prefix).splitlines()
    for ref in refs:
        git.run("update-ref", "-d", ref)
