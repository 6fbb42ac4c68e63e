"""Whether the code a warm server has loaded is still what is on disk.

A run forked from the server uses every module the server imported (the program, both SDKs and
what they import: some 4,000 files) as it was then; what the run imports later it reads from disk.
So the server watches the folders of the files it loaded with inotify, and a change to one of them
(written, touched, replaced, moved or removed: an SDK patched in place or upgraded) makes it stale:
it refuses the next run (which runs cold and starts a fresh server) and quits. Reading the event
queue costs a system call per run, where stat-ing the files costs ~15 ms. A file changed before
its watch was set (while the server started) shows by its change time, checked once at start
against the time the launcher started the server; folders inotify cannot watch (no watches left)
are stat-ed on each run.
"""

from __future__ import annotations

import os
import sys

from agent_cli.sandbox.repo_index import new_watcher

IN_MODIFY, IN_ATTRIB, IN_CLOSE_WRITE = 0x2, 0x4, 0x8
IN_MOVED_FROM, IN_MOVED_TO, IN_CREATE, IN_DELETE = 0x40, 0x80, 0x100, 0x200
IN_DELETE_SELF, IN_MOVE_SELF, IN_UNMOUNT, IN_IGNORED = 0x400, 0x800, 0x2000, 0x8000
CHANGES = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
FOLDER_GONE = IN_DELETE_SELF | IN_MOVE_SELF | IN_UNMOUNT | IN_IGNORED
COARSE_CLOCK_S = 0.05  # file times lag the clock by a tick or so: a change this close to the start counts


def module_files() -> list[str]:
    """The file of every module imported so far (sources, extension modules, packages' __init__)."""
    found = {getattr(module, "__file__", None) for module in list(sys.modules.values())}
    return sorted(path for path in found if isinstance(path, str) and os.path.isabs(path))


class LoadedCode:
    """``since``: when the server started (before its imports); ``files``: all loaded ones."""

    def __init__(self, since: float, files: list[str] | None = None) -> None:
        self.names: dict[str, set[bytes]] = {}
        for path in module_files() if files is None else files:
            folder, name = os.path.split(path)
            self.names.setdefault(folder, set()).add(os.fsencode(name))
        self.watcher = new_watcher(CHANGES | FOLDER_GONE)
        unwatched = [f for f in self.names if self.watcher is None or not self.watcher.add(f)]
        self.stats = {path: _stat(path) for f in unwatched for path in self._files(f)}
        self.stale = self._changed_since(since - COARSE_CLOCK_S)

    def unchanged(self) -> bool:
        """False from the first change on (the events are read, and forgotten, here)."""
        if self.stale:
            return False
        if self.watcher is not None:
            for folder, mask, name in self.watcher.events():
                if mask & FOLDER_GONE or name in self.names.get(folder, ()):
                    self.stale = True
            self.stale |= self.watcher.overflowed
        self.stale |= any(_stat(path) != seen for path, seen in self.stats.items())
        return not self.stale

    def close(self) -> None:
        if self.watcher is not None:
            self.watcher.close()

    def fileno(self) -> int:
        """The event queue, for a selector (-1 without one)."""
        return -1 if self.watcher is None else self.watcher.fd

    def _files(self, folder: str) -> list[str]:
        return [os.path.join(folder, os.fsdecode(name)) for name in self.names[folder]]

    def _changed_since(self, start: float) -> bool:
        for folder in self.names:
            for path in self._files(folder):
                try:
                    if os.stat(path).st_ctime > start:
                        return True
                except OSError:
                    return True
        return False


def _stat(path: str) -> tuple[int, ...]:
    try:
        info = os.stat(path)
    except OSError:
        return ()
    return (info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)
