"""Which files a search or listing skips: .gitignore rules (via pathspec), ``.git`` itself, symlinks.

The rules mirror ripgrep run with ``--hidden --no-require-git --no-ignore-global
--no-ignore-exclude``, so the Python walker and ``rg`` see the same files:
- ``.gitignore``, ``.ignore`` and ``.rgignore`` files apply in their directory and below, and
  those in every ancestor of the search root apply too; a deeper file overrides a shallower one,
  and any ``.rgignore`` match beats any ``.ignore`` match, which beats any ``.gitignore`` match.
- Hidden files are included; anything named ``.git`` is skipped.
- A root the user names explicitly is searched even if an ancestor's rules ignore it.
- Symlinks are not followed.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pathspec

IGNORE_FILES = (".rgignore", ".ignore", ".gitignore")  # strongest first
ALWAYS_SKIPPED = frozenset({".git"})


class IgnoreRules:
    def __init__(self, root: Path):
        self.root = root
        self._specs: dict[tuple[Path, str], pathspec.GitIgnoreSpec | None] = {}
        # Ancestor levels whose rules ignore the root itself would hide everything under a root
        # the user asked for explicitly; ripgrep does not apply them there, neither do we.
        self._skipped_levels = {
            level for level in root.parents if self._level_verdict(level, root, is_dir=True) is True
        }

    def is_ignored(self, path: Path, is_dir: bool) -> bool:
        if path.name in ALWAYS_SKIPPED:
            return True
        levels = [level for level in path.parents if level not in self._skipped_levels]
        for name in IGNORE_FILES:
            for level in levels:  # deepest first
                spec = self._spec(level, name)
                if spec is None:
                    continue
                verdict = spec.check_file(_relative(path, level, is_dir)).include
                if verdict is not None:
                    return verdict
        return False

    def _level_verdict(self, level: Path, path: Path, is_dir: bool) -> bool | None:
        for name in IGNORE_FILES:
            spec = self._spec(level, name)
            if spec is not None:
                verdict = spec.check_file(_relative(path, level, is_dir)).include
                if verdict is not None:
                    return verdict
        return None

    def _spec(self, level: Path, name: str) -> pathspec.GitIgnoreSpec | None:
        key = (level, name)
        if key not in self._specs:
            self._specs[key] = _load(level / name)
        return self._specs[key]


def _load(path: Path) -> pathspec.GitIgnoreSpec | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    import pathspec  # here: a session that never searches or lists does not pay for it

    try:
        spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
    except Exception:  # a malformed pattern must not break searching
        return None
    return spec if spec.patterns else None


def _relative(path: Path, level: Path, is_dir: bool) -> str:
    rel = path.relative_to(level).as_posix()
    return rel + "/" if is_dir else rel


def sorted_entries(directory: Path) -> list[os.DirEntry[str]]:
    """A directory's entries sorted by name (byte order, like ``rg --sort path``)."""
    try:
        with os.scandir(directory) as it:
            entries = list(it)
    except OSError:
        return []
    return sorted(entries, key=lambda entry: entry.name)


def walk_files(root: Path, rules: IgnoreRules) -> Iterator[Path]:
    """Regular files under ``root``, depth first in name order, skipping ignored entries."""
    for entry in sorted_entries(root):
        if entry.is_symlink():
            continue
        path = Path(entry.path)
        try:
            is_dir = entry.is_dir(follow_symlinks=False)
        except OSError:
            continue
        if rules.is_ignored(path, is_dir):
            continue
        if is_dir:
            yield from walk_files(path, rules)
        elif entry.is_file(follow_symlinks=False):
            yield path
