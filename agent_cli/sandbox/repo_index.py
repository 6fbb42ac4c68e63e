"""Every ``.git`` below a workspace root, at any depth, kept current without a full scan per command.

The first use walks the whole tree once (``node_modules``, ``build``, hidden folders included; not
into a ``.git``, not through symbolic links) and watches each folder with inotify (a watch is
added before the folder is listed, so nothing made meanwhile is missed). After that
:meth:`RepoIndex.refresh` reads the events: only a folder that gained or lost entries is listed
again, and folders new in it are walked. A ``.git`` that was not there before is returned as new.

Folders inotify cannot watch (another OS, no watches left) are ``stat``-ed on every refresh, and
listed again when their modification time changed; so is every folder once after the kernel's
event queue overflowed. A time within ``RECENT_S`` of now is not trusted (a change in the same
clock tick would not move it): such a folder is listed again next time.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

MAX_DIRS = 100_000  # past this the index stops growing (and says so): a home folder, a disk
RECENT_S = 2.0
VIRTUAL = {"/proc", "/sys", "/dev", "/run"}  # never walked (a session started in /)
IN_MODIFY_DIR = 0x100 | 0x200 | 0x40 | 0x80  # IN_CREATE, IN_DELETE, IN_MOVED_FROM, IN_MOVED_TO
IN_ONLYDIR, IN_DONT_FOLLOW, IN_Q_OVERFLOW, IN_IGNORED = 0x01000000, 0x02000000, 0x4000, 0x8000
IN_NONBLOCK, IN_CLOEXEC = 0o4000, 0o2000000
EVENT = struct.Struct("iIII")  # wd, mask, cookie, len (then the name)


class Watcher:
    """inotify through ctypes: which watched folders changed since the last :meth:`changed`
    (``mask``: which changes; entries made, removed or moved unless told)."""

    def __init__(self, mask: int = IN_MODIFY_DIR) -> None:
        self.mask = mask
        self.libc = ctypes.CDLL(None, use_errno=True)
        self.fd = self.libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        self.paths: dict[int, str] = {}
        self.wds: dict[str, int] = {}
        self.overflowed = False

    def add(self, folder: str) -> bool:
        wd = self.libc.inotify_add_watch(self.fd, os.fsencode(folder), self.mask | IN_ONLYDIR | IN_DONT_FOLLOW)
        if wd < 0:
            return False
        self.paths[wd] = folder  # a folder moved inside the tree keeps its watch: it now has this path
        self.wds[folder] = wd
        return True

    def remove(self, folder: str) -> None:
        wd = self.wds.pop(folder, None)
        if wd is not None and self.paths.get(wd) == folder:
            del self.paths[wd]
            self.libc.inotify_rm_watch(self.fd, wd)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self.fd)

    def changed(self) -> set[str]:
        return {folder for folder, mask, _name in self.events() if not mask & IN_IGNORED}

    def events(self) -> Iterator[tuple[str, int, bytes]]:
        """Each event since the last read: its folder, mask and the name in the folder (b"" for
        the folder itself). A watch the kernel dropped (its folder gone) comes as IN_IGNORED."""
        while True:
            try:
                data = os.read(self.fd, 256 * 1024)
            except BlockingIOError:
                return
            offset = 0
            while offset < len(data):
                wd, mask, _, size = EVENT.unpack_from(data, offset)
                name = data[offset + EVENT.size : offset + EVENT.size + size].rstrip(b"\0")
                offset += EVENT.size + size
                if mask & IN_Q_OVERFLOW:
                    self.overflowed = True
                elif mask & IN_IGNORED:
                    if (gone := self.paths.pop(wd, None)) is not None:
                        self.wds.pop(gone, None)
                        yield gone, mask, name
                elif wd in self.paths:
                    yield self.paths[wd], mask, name


def new_watcher(mask: int = IN_MODIFY_DIR) -> Watcher | None:
    if not sys.platform.startswith("linux"):
        return None
    try:
        return Watcher(mask)
    except (OSError, AttributeError):
        return None


class RepoIndex:
    def __init__(self, root: Path):
        self.root = str(root)
        self.dirs: dict[str, int] = {}  # folder -> mtime_ns (-1: list it again next time)
        self.children: dict[str, set[str]] = {}  # folder -> its sub-folders
        self.repos: set[str] = set()  # paths of .git entries (folders or files)
        self.full = False  # MAX_DIRS reached: folders beyond it are not watched
        self.scanned = False
        self.watcher = new_watcher()  # None: stat every folder on refresh
        self.unwatched: set[str] = set()
        self.lock = threading.Lock()  # the first walk may run in a thread at session start

    def refresh(self) -> list[Path]:
        """The ``.git`` entries that appeared since the last call (none on the first: those were
        there before the session's first command)."""
        if not self.scanned:
            self.scanned = True
            self._walk(self.root, [])
            return []
        new: list[str] = []
        suspects = list(self.unwatched)
        if self.watcher is not None:
            for folder in sorted(self.watcher.changed(), key=len):  # parents first: a child may be dropped
                if folder in self.dirs:
                    self._relist(folder, new)
            if self.watcher.overflowed:  # events were lost: compare every folder once
                self.watcher.overflowed = False
                suspects = list(self.dirs)
        for folder in suspects:
            mtime = self.dirs.get(folder)
            if mtime is None:
                continue  # dropped with a removed parent during this loop
            try:
                now = os.stat(folder).st_mtime_ns
            except OSError:
                self._drop(folder)
                continue
            if now != mtime:
                self._relist(folder, new)
        return [Path(path) for path in new]

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()
            self.watcher = None

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
        if folder not in self.dirs and (self.watcher is None or not self.watcher.add(folder)):
            self.unwatched.add(folder)  # no inotify, or out of watches: stat'ed on every refresh
        try:
            mtime = os.stat(folder).st_mtime_ns
            with os.scandir(folder) as entries:
                for entry in entries:
                    if entry.name == ".git":
                        if folder != self.root and entry.path not in self.repos:  # the root's: a protected name
                            self.repos.add(entry.path)
                            new.append(entry.path)
                    elif entry.is_dir(follow_symlinks=False) and entry.path not in VIRTUAL:
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
            if self.dirs.pop(current, None) is not None and self.watcher is not None:
                self.watcher.remove(current)
            self.unwatched.discard(current)
            stack += self.children.pop(current, set())
            with contextlib.suppress(KeyError):
                self.repos.remove(os.path.join(current, ".git"))
        if self.root == folder:
            self.scanned = False
