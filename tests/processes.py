"""Whether a process the agent started is still running (tests check by PID that nothing outlives its use)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    return state(pid) not in (None, "Z")


def state(pid: int) -> str | None:
    """A process's state letter (R, S, T for stopped, Z for a zombie...); None when it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return stat.rsplit(")", 1)[1].split()[0]


def pids_running(*argv: str) -> list[int]:
    """Live processes whose command line is exactly ``argv`` (e.g. a ``sleep`` with a duration no
    other test uses): found from outside any sandbox's pid namespace, where ``$$`` would lie."""
    wanted = "\0".join(argv).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes() == wanted and alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:  # it ended while we looked
                continue
    return found


async def started(*argv: str, within: float = 10.0) -> int:
    """The pid of the process running ``argv``, once it runs."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if pids := pids_running(*argv):
            return pids[0]
        await asyncio.sleep(0.02)
    raise AssertionError(f"{' '.join(argv)} did not start within {within} s")


async def gone(pid: int, within: float = 3.0) -> bool:
    """True once ``pid`` has ended, waiting up to ``within`` seconds for it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.02)
    return False


def holds_open(pid: int, path: Path) -> bool:
    """Whether ``pid`` has ``path`` open (a tool reading it, in a thread or not)."""
    try:
        descriptors = list(Path(f"/proc/{pid}/fd").iterdir())
    except OSError:
        return False
    for descriptor in descriptors:
        try:
            if os.readlink(descriptor) == str(path):
                return True
        except OSError:  # closed while we looked
            continue
    return False


def catches(pid: int, signum: int) -> bool:
    """Whether ``pid`` has a handler of its own for ``signum`` (``SigCgt`` in /proc/PID/status)."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    mask = next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt:"))
    return bool(int(mask, 16) >> (signum - 1) & 1)
