"""A command stopped while it is still starting ends at once, with its whole process group."""

from __future__ import annotations

import asyncio
import time
import uuid

from agent_cli.tools.capture import OutputCapture
from agent_cli.tools.process import run_process
from tests.processes import pids_running
from tests.waiting import until


async def test_cancelled_while_starting_kills_the_group_without_waiting_for_it(tmp_path):
    seconds = f"30.{uuid.uuid4().int % 10**6:06d}"  # a sleep no other process runs
    for _ in range(5):  # the cancel must land while the process is being started; try a few times
        task = asyncio.create_task(
            run_process(
                ["bash", "-c", f"sleep {seconds}; true"],
                cwd=tmp_path,
                capture=OutputCapture(tmp_path / "spill.txt"),
                timeout_s=60,
            )
        )
        await asyncio.sleep(0)  # the spawn has begun but not finished
        started = time.monotonic()
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            pass
        assert time.monotonic() - started < 5
    # a group that was started is killed: its sleep ends (it would run 30 s otherwise)
    await until(lambda: not pids_running("sleep", seconds), within=5, what=f"sleep {seconds} to end")
