"""A command stopped while it is still starting ends at once, with its whole process group."""

from __future__ import annotations

import asyncio
import subprocess
import time
import uuid

from agent_cli.tools.capture import OutputCapture
from agent_cli.tools.process import run_process


def running(marker: str) -> list[str]:
    found = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True)
    return found.stdout.split()


async def test_cancelled_while_starting_kills_the_group_without_waiting_for_it(tmp_path):
    seconds = f"30.{uuid.uuid4().int % 10**6:06d}"  # a sleep no other process runs
    for _ in range(5):  # the cancel must land while the process is being started; try a few times
        task = asyncio.create_task(run_process(
            ["bash", "-c", f"sleep {seconds}; touch late"], cwd=tmp_path,
            capture=OutputCapture(tmp_path / "spill.txt"), timeout_s=60,
        ))
        await asyncio.sleep(0)  # the spawn has begun but not finished
        started = time.monotonic()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert time.monotonic() - started < 5
    await asyncio.sleep(0.2)
    assert running(f"sleep {seconds}") == []
    assert not (tmp_path / "late").exists()
