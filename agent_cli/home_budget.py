"""A total disk budget for what the agent keeps under its home, oldest removed first.

Counted: spilled outputs and background logs (``tool-outputs``), long commands' script files,
session files, checkpoints' git directories and index files, quarantined files (``refused``),
logs and shell snapshots. Not counted and never removed: configuration, memory, plugins, skills,
history. Each session file, checkpoint repository or output file is one unit; when the total is
over ``home_budget_mb`` the units are removed by age (their newest modification), oldest first,
until it fits. A unit in use is kept: modified in the last ``IN_USE_S`` seconds, or registered
with :func:`keep` (the running session's file). Checked when a session starts and after each
output that was spilled (at most every ``CHECK_EVERY_S`` unless much was written since). At a
session's start the check is skipped when any process checked in the last ``START_CHECK_EVERY_S``
(a stamp file in the home): a script running `agent exec` in a loop does not walk the home each
time, nor compete with its own start-up for the interpreter.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import threading
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_BUDGET_MB = 2048
COUNTED = ("tool-outputs", "tool-commands", "sessions", "checkpoints", "refused", "logs", "shell-snapshots")
NESTED = {"sessions": 3, "checkpoints": 1}  # folders whose units lie deeper (YYYY/MM/DD, index/)
IN_USE_S = 60.0
CHECK_EVERY_S = 30.0
START_CHECK_EVERY_S = 600.0
STAMP = ".home-budget-checked"  # touched after each check, by any process

_lock = threading.Lock()
_enforcing = threading.Lock()
_threads: list[threading.Thread] = []
_again = threading.Event()
_budgets: dict[Path, int] = {}  # home -> bytes
_kept: set[Path] = set()
_pending: dict[Path, int] = {}  # bytes written since the last check
_checked: dict[Path, float] = {}


@dataclass(frozen=True, slots=True)
class Unit:
    path: Path
    size: int
    mtime: float


def configure(home: Path, budget_mb: int) -> None:
    with _lock:
        _budgets[Path(home)] = budget_mb * 1024 * 1024


def start(home: Path, budget_mb: int, session_file: Path | None) -> None:
    """A session starts: its budget, its file kept, and a check in the background."""
    configure(home, budget_mb)
    if session_file is not None:
        keep(session_file)
    if not _checked_lately(Path(home)):
        _in_background(Path(home))


def _checked_lately(home: Path) -> bool:
    try:
        return time.time() - os.stat(home / STAMP).st_mtime < START_CHECK_EVERY_S
    except OSError:
        return False


def _in_background(home: Path) -> None:
    thread = threading.Thread(target=enforce, args=(home,), daemon=True, name="home-budget")
    _threads.append(thread)
    thread.start()


@atexit.register
def _finish() -> None:
    """A check under way finishes before the process exits (briefly: it only deletes files)."""
    for thread in _threads:
        thread.join(timeout=2)


def budget(home: Path) -> int:
    return _budgets.get(Path(home), DEFAULT_BUDGET_MB * 1024 * 1024)


def keep(path: Path) -> None:
    """Never remove ``path`` (or what holds it) in this process."""
    with _lock:
        _kept.add(Path(path))


def _measure(path: Path) -> tuple[int, float]:
    """(bytes, newest mtime) of a file or a whole folder (symbolic links not followed)."""
    try:
        info = os.lstat(path)
    except OSError:
        return 0, 0.0
    if not os.path.isdir(path) or os.path.islink(path):
        return info.st_size, info.st_mtime
    size, newest = 0, info.st_mtime
    for folder, dirs, files in os.walk(path):
        for name in files + dirs:
            with contextlib.suppress(OSError):
                child = os.lstat(os.path.join(folder, name))
                size += child.st_size if name in files else 0
                newest = max(newest, child.st_mtime)
    return size, newest


def units(home: Path) -> list[Unit]:
    found: list[Unit] = []
    for name in COUNTED:
        folders = [Path(home) / name]
        for _ in range(NESTED.get(name, 0)):
            deeper: list[Path] = []
            for folder in folders:
                with contextlib.suppress(OSError):
                    deeper += [Path(e.path) for e in os.scandir(folder) if e.is_dir(follow_symlinks=False)]
            if name == "checkpoints":  # its repositories are units; only index/ holds files to count alone
                deeper = [folder for folder in deeper if folder.name == "index"]
                folders += deeper
            else:
                folders = deeper
        for folder in folders:
            with contextlib.suppress(OSError):
                for entry in os.scandir(folder):
                    path = Path(entry.path)
                    if name == "checkpoints" and path.name == "index" and path.parent == Path(home) / name:
                        continue
                    size, mtime = _measure(path)
                    found.append(Unit(path, size, mtime))
    return found


def usage(home: Path) -> int:
    return sum(unit.size for unit in units(home))


def enforce(home: Path, limit: int | None = None, now: float | None = None) -> list[Path]:
    """Remove the oldest units until the total fits ``limit``; returns what was removed."""
    if not _enforcing.acquire(blocking=False):
        _again.set()  # another check is running now: it runs once more when done
        return []
    try:
        removed = _enforce(Path(home), limit, now)
        while _again.is_set():
            _again.clear()
            removed += _enforce(Path(home), limit, now)
        return removed
    finally:
        _enforcing.release()


def _enforce(home: Path, limit: int | None, now: float | None) -> list[Path]:
    limit = budget(home) if limit is None else limit
    now = time.time() if now is None else now
    found = units(home)
    total = sum(unit.size for unit in found)
    removed: list[Path] = []
    for unit in sorted(found, key=lambda u: u.mtime):
        if total <= limit:
            break
        if now - unit.mtime < IN_USE_S or any(k == unit.path or k.is_relative_to(unit.path) for k in _kept):
            continue
        with contextlib.suppress(OSError):
            if unit.path.is_dir() and not unit.path.is_symlink():
                shutil.rmtree(unit.path)
            else:
                unit.path.unlink()
            total -= unit.size
            removed.append(unit.path)
    with _lock:
        _checked[home], _pending[home] = time.monotonic(), 0
    with contextlib.suppress(OSError):
        (home / STAMP).touch()
    return removed


def written(home: Path, size: int) -> None:
    """``size`` more bytes were kept under ``home``: check the budget when due."""
    home = Path(home)
    with _lock:
        _pending[home] = _pending.get(home, 0) + size
        due = _pending[home] > budget(home) // 20 or time.monotonic() - _checked.get(home, 0.0) > CHECK_EVERY_S
    if due:
        _in_background(home)


def describe(home: Path) -> str:
    """For /status: the use against the budget."""
    used, limit = usage(home), budget(home)
    return f"{used / 1024 / 1024:,.1f} MB of {limit // 1024 // 1024:,} MB (home_budget_mb; oldest removed first)"
