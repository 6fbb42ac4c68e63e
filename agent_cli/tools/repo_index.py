"""Every ``.git`` below a workspace root, at any depth, kept current without a full scan per command.

The first use walks the whole tree once (``node_modules``, ``build``, hidden folders included; not
into a ``.git``, not through symbolic links) and keeps each folder's modification time. After that
:meth:`RepoIndex.refresh` only ``stat``s the folders it knows: a folder whose time changed has
gained or lost entries, so only it is listed again, and folders new in it are walked. A ``.git``
that was not there before is returned as new. A time within ``RECENT_S`` of now is not trusted
(a change in the same clock tick would not move it): such a folder is listed again next time.
"""

from __future__ import annotations

import contextlib
import os
import time
from pathlib import Path

MAX_DIRS = 200_000  # past this the index stops growing (and says so): a home folder, a disk
RECENT_S = 2.0


class RepoIndex:
    def __init__(self, root: Path):
        self.root = str(root)
        self.dirs: dict[str, int] = {}  # folder -> mtime_ns (-1: list it again next time)
        self.children: dict[str, set[str]] = {}  # folder -> its sub-folders
        self.repos: set[str] = set()  # paths of .git entries (folders or files)
        self.full = False  # MAX_DIRS reached: folders beyond it are not watched
        self.scanned = False

    def refresh(self) -> list[Path]:
        """The ``.git`` entries that appeared since the last call (none on the first: those were
        there before the session's first command)."""
        if not self.scanned:
            self.scanned = True
            self._walk(self.root, [])
            return []
        new: list[str] = []
        for folder, mtime in list(self.dirs.items()):
            if folder not in self.dirs:
                continue  # dropped with a removed parent during this loop
            try:
                now = os.stat(folder).st_mtime_ns
            except OSError:
                self._drop(folder)
                continue
            if now != mtime:
                self._relist(folder, new)
        return [Path(path) for path in new]

    def _walk(self, top: str, new: list[str]) -> None:
        stack = [top]
        while stack:
            folder = stack.pop()
            stack += self._list(folder, new)

    def _list(self, folder: str, new: list[str]) -> list[str]:
        """List ``folder`` (recording it); returns sub-folders not known before."""
        if folder not in self.dirs and len(self.dirs) >= MAX_DIRS:
            self.full = True
            return []
        subdirs: set[str] = set()
        try:
            mtime = os.stat(folder).st_mtime_ns
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name == ".git":
                        if folder != self.root and entry.path not in self.repos:  # the root's: a protected name
                            self.repos.add(entry.path)
                            new.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False):
                        subdirs.add(entry.path)
        except OSError:
            return []
        self.dirs[folder] = -1 if time.time_ns() - mtime < RECENT_S * 1e9 else mtime
        old = self.children.get(folder, set())
        self.children[folder] = subdirs
        for gone in old - subdirs:
            self._drop(gone)
        for repo in [r for r in self.repos if os.path.dirname(r) == folder]:
            if not os.path.lexists(repo):
                self.repos.discard(repo)
        return [path for path in subdirs if path not in self.dirs]

    def _relist(self, folder: str, new: list[str]) -> None:
        for added in self._list(folder, new):
            self._walk(added, new)

    def _drop(self, folder: str) -> None:
        stack = [folder]
        while stack:
            current = stack.pop()
            self.dirs.pop(current, None)
            stack += self.children.pop(current, set())
            with contextlib.suppress(KeyError):
                self.repos.remove(os.path.join(current, ".git"))
        if self.root == folder:
            self.scanned = False
