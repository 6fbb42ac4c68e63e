"""Whether a process the agent started is still running (tests check by PID that nothing outlives its use)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path


def alive(pid: int) -> bool:
    """A process that exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except (FileNotFoundError, ProcessLookupError):
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


async def gone(pid: int, within: float = 3.0) -> bool:
    """True once ``pid`` has ended, waiting up to ``within`` seconds for it."""
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        await asyncio.sleep(0.02)
    return False
