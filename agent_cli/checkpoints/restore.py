"""Restoring files to a snapshot: plan first (what changes, what conflicts, the diff), then apply.

A restore takes back what happened between ``before`` and ``after`` (the tree when the turn
ended; without one, the tree now). Only paths that changed in between are touched: a file the
turn created is removed, one it deleted or changed is written back with its permission bits. A
path that changed again since ``after`` (a hand edit) is a conflict: reported, never overwritten.
Ignored files and files over the size limit are never in a snapshot, so they are never touched.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.checkpoints.gitcmd import CheckpointError, Deadline, Git, nul_list
from agent_cli.checkpoints.snapshot import DEFAULT_MAX_FILE_BYTES, Snapshot, TreeState, tree_state
from agent_cli.checkpoints.store import Store

MAX_DIFF_LINES = 400
Entry = tuple[str, str, int | None]  # (git mode, blob id, permission bits; None for a symlink)


@dataclass(frozen=True)
class Change:
    path: str
    entry: Entry | None  # what to write back; None: remove the file (the turn created it)


@dataclass
class RestorePlan:
    store: Store
    before: Snapshot
    changes: list[Change] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)  # changed by hand since the turn: left alone
    skipped: list[str] = field(default_factory=list)  # over the size limit: left alone
    diff: str = ""  # what the restore takes back (the turn's diff, for the changed paths)
    added: int = 0  # lines the restore removes and puts back (from the turn's diff)
    removed: int = 0

    @property
    def paths(self) -> list[str]:
        return [change.path for change in self.changes]

    def summary(self) -> str:
        parts = [f"{len(self.changes)} file(s) to restore (+{self.removed} -{self.added} lines)"]
        if self.conflicts:
            parts.append(f"{len(self.conflicts)} changed by hand since, left as they are: {', '.join(self.conflicts)}")
        if self.skipped:
            parts.append(f"over the size limit, not restored: {', '.join(self.skipped)}")
        return "\n".join(parts)


def entries(git: Git, tree: str, paths: list[str], modes: dict[str, int]) -> dict[str, Entry]:
    if not paths:
        return {}
    found: dict[str, Entry] = {}
    for chunk in _chunks(paths, 2000):
        for record in nul_list(git.run("ls-tree", "-r", "-z", "--full-tree", tree, "--", *chunk)):
            meta, _, path = record.partition("\t")
            mode, _, sha = meta.split(" ")
            found[path] = (mode, sha, _perm(mode, modes.get(path)))
    return found


def _perm(mode: str, recorded: int | None) -> int | None:
    if mode == "120000":
        return None
    return recorded if recorded is not None else (0o755 if mode == "100755" else 0o644)


def changed_paths(git: Git, old: TreeState, new: TreeState) -> set[str]:
    """Paths whose content, type or permission bits differ between two states."""
    paths = set(nul_list(git.run("diff-tree", "-r", "-z", "--no-renames", "--name-only", old.tree, new.tree)))
    unusual = sorted(set(old.modes) | set(new.modes))
    if unusual:  # the same blob with other permission bits: git alone would not see it
        a, b = entries(git, old.tree, unusual, old.modes), entries(git, new.tree, unusual, new.modes)
        paths.update(path for path in unusual if a.get(path) != b.get(path))
    return paths


def plan_restore(
    store: Store,
    before: Snapshot,
    after: TreeState | None,
    scratch_index: Path,
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
    time_limit: float | None = 120,
) -> RestorePlan:
    """What restoring ``before`` would do to the tree now. ``scratch_index`` is an index file the
    plan may use (a copy of the session's own saves hashing unchanged files again)."""
    deadline = Deadline(time_limit)
    git = store.git(None, deadline)
    now = tree_state(store, scratch_index, max_file_bytes, deadline)
    after = after or now
    plan = RestorePlan(store, before)
    too_big = set(before.skipped) | set(after.skipped) | set(now.skipped)
    turn = sorted(changed_paths(git, before, after))
    plan.skipped = [path for path in turn if path in too_big]
    turn = [path for path in turn if path not in too_big]
    by_hand = changed_paths(git, after, now) if after is not now else set()
    was = entries(git, before.tree, turn, before.modes)
    current = entries(git, now.tree, [path for path in turn if path in by_hand], now.modes)
    for path in turn:
        if path in by_hand:
            if current.get(path) != was.get(path):
                plan.conflicts.append(path)
            continue  # already as it was before
        plan.changes.append(Change(path, was.get(path)))
    if plan.changes:
        plan.diff, plan.added, plan.removed = turn_diff(git, before.tree, after.tree, plan.paths)
    return plan


def line_counts(git: Git, old_tree: str, new_tree: str, paths: list[str] | None = None) -> tuple[int, int, int]:
    """(files, added lines, removed lines) from ``old_tree`` to ``new_tree`` (for ``paths``)."""
    spec = ["--", *paths] if paths and len(paths) <= 2000 else []
    numstat = git.run("diff-tree", "-r", "--numstat", "--no-renames", old_tree, new_tree, *spec).decode(
        "utf-8", "replace"
    )
    files = added = removed = 0
    for line in numstat.splitlines():
        plus, minus, _ = line.split("\t", 2)
        files += 1
        added += int(plus) if plus.isdigit() else 0
        removed += int(minus) if minus.isdigit() else 0
    return files, added, removed


def turn_diff(git: Git, old_tree: str, new_tree: str, paths: list[str]) -> tuple[str, int, int]:
    """The diff from ``old_tree`` to ``new_tree`` for ``paths`` (cut to MAX_DIFF_LINES), and its
    added and removed line counts."""
    _, added, removed = line_counts(git, old_tree, new_tree, paths)
    spec = ["--", *paths] if len(paths) <= 2000 else []
    patch = git.run("diff-tree", "-r", "-p", "--no-renames", "--no-ext-diff", "--no-color", old_tree, new_tree, *spec)
    lines = patch.decode("utf-8", "replace").splitlines()
    if len(lines) > MAX_DIFF_LINES:
        lines = [*lines[:MAX_DIFF_LINES], f"… {len(lines) - MAX_DIFF_LINES} more diff lines"]
    return "\n".join(lines), added, removed


def apply_restore(plan: RestorePlan, time_limit: float | None = 120) -> list[str]:
    """Carry out ``plan``. Returns the paths restored or removed; raises CheckpointError on the
    first file that cannot be written (those before it stay restored)."""
    store = plan.store
    git = store.git(None, Deadline(time_limit))
    root = Path(store.work_tree)
    blobs = read_blobs(git, [change.entry[1] for change in plan.changes if change.entry is not None])
    done: list[str] = []
    for change in plan.changes:
        target = root / change.path
        try:
            _no_link_on_the_way(root, target)
            if change.entry is None:
                _remove(target, root)
            else:
                _write(target, change.entry, blobs[change.entry[1]])
        except OSError as exc:
            raise CheckpointError(f"cannot restore {change.path}: {exc.strerror or exc}") from None
        done.append(change.path)
    return done


def read_blobs(git: Git, shas: list[str]) -> dict[str, bytes]:
    unique = list(dict.fromkeys(shas))
    if not unique:
        return {}
    out = git.run("cat-file", "--batch", input="".join(f"{sha}\n" for sha in unique).encode())
    blobs: dict[str, bytes] = {}
    position = 0
    for sha in unique:
        header_end = out.index(b"\n", position)
        header = out[position:header_end].split()
        if len(header) < 3:
            raise CheckpointError(f"blob {sha[:12]} is missing from the checkpoint store")
        size = int(header[2])
        blobs[sha] = out[header_end + 1 : header_end + 1 + size]
        position = header_end + 1 + size + 1
    return blobs


def _no_link_on_the_way(root: Path, target: Path) -> None:
    """Refuse a path whose folder is a symbolic link (one made after the turn, by a background
    command): the agent writes unsandboxed, so `tools -> .git/hooks` would plant a git hook."""
    folder = root
    for part in target.relative_to(root).parts[:-1]:
        folder = folder / part
        if folder.is_symlink():
            raise OSError(40, f"{folder.relative_to(root)} is a symbolic link", str(folder))


def _write(target: Path, entry: Entry, content: bytes) -> None:
    mode, _, perm = entry
    if target.is_dir() and not target.is_symlink():
        raise IsADirectoryError(21, "a directory is in the way", str(target))
    target.parent.mkdir(parents=True, exist_ok=True)
    if mode == "120000":
        if target.is_symlink() or target.exists():
            target.unlink()
        os.symlink(os.fsdecode(content), target)
        return
    # Written beside the file and renamed over it: a reader never sees half a file.
    handle, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".restore")
    try:
        with os.fdopen(handle, "wb") as out:
            out.write(content)
        os.chmod(temporary, perm if perm is not None else 0o644)
        os.replace(temporary, target)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _remove(target: Path, root: Path) -> None:
    if target.is_symlink() or target.is_file():
        target.unlink()
    parent = target.parent
    while parent != root and root in parent.parents:  # directories the turn made for it, now empty
        try:
            parent.rmdir()
        except OSError:
            break
        parent = parent.parent


def _chunks(items: list[str], size: int):
    for start in range(0, len(items), size):
        yield items[start : start + size]
