"""Setting up a new worktree: the files git does not carry (``.env``, local config) copied from the
checkout it was made from. The set-up command is run by the front end, as a ``!command`` of the
session, so it meets the sandbox and the approval policy like any other command."""

from __future__ import annotations

import shutil
from pathlib import Path

MAX_COPIED = 1_000  # a pattern that matches a whole tree is a mistake, not a set-up


def copy_named_files(source: Path, target: Path, patterns: tuple[str, ...]) -> tuple[list[str], list[str]]:
    """Copy the files ``patterns`` (paths or globs relative to ``source``) name into ``target``,
    where they are not already; never from outside ``source`` nor out of a ``.git`` folder.
    Returns (copied relative paths, warnings)."""
    source, target = source.resolve(), target.resolve()
    copied: list[str] = []
    warnings: list[str] = []
    for pattern in patterns:
        matches = sorted(source.glob(pattern.strip().lstrip("/"))) if not Path(pattern).is_absolute() else []
        files = [path for path in matches if path.is_file() or path.is_dir()]
        if not files:
            warnings.append(f"worktree.copy: {pattern!r} matches nothing in {source}")
        for path in files:
            for file in [path] if path.is_file() else sorted(p for p in path.rglob("*") if p.is_file()):
                relative = _inside(file, source)
                if relative is None or ".git" in relative.parts:
                    warnings.append(f"worktree.copy: {pattern!r}: {file} is outside the checkout; not copied")
                    continue
                destination = target / relative
                if destination.exists() or destination.is_symlink():
                    continue  # tracked, or already there: the worktree's own stays
                if len(copied) >= MAX_COPIED:
                    warnings.append(f"worktree.copy: stopped after {MAX_COPIED} files")
                    return copied, warnings
                destination.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(file, destination, follow_symlinks=False)
                copied.append(str(relative))
    return copied, warnings


def _inside(path: Path, root: Path) -> Path | None:
    """``path`` relative to ``root`` when it (resolved: symlinks followed) lies inside it."""
    resolved = path.resolve()
    return path.relative_to(root) if resolved.is_relative_to(root) and path.is_relative_to(root) else None
