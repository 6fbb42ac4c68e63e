"""Short commands whose whole output is wanted at once (`!cmd` in a session without a shell tool,
hooks, git queries) end with their children at the time limit and when the user interrupts."""

from __future__ import annotations

import asyncio

import pytest

from agent_cli.commands.shell_runner import run_bash
from agent_cli.tools.process import TIMEOUT_EXIT_CODE
from tests.processes import gone

BACKGROUND_CHILD = "echo started; sleep 30 & echo $! > child.pid; wait"


async def test_a_command_past_its_limit_is_killed_with_its_children(tmp_path):
    output, exit_code = await run_bash(BACKGROUND_CHILD, tmp_path, 300, 10_000)
    assert exit_code == TIMEOUT_EXIT_CODE
    assert output.startswith("Exit code: 124\n") and output.endswith("(timed out after 300 ms)")
    assert await gone(int((tmp_path / "child.pid").read_text()))


async def test_an_interrupted_command_leaves_nothing_running(tmp_path):
    pid_file = tmp_path / "child.pid"
    task = asyncio.create_task(run_bash(BACKGROUND_CHILD, tmp_path, 60_000, 10_000))
    async with asyncio.timeout(10):
        while not pid_file.exists() or not pid_file.read_text().strip():
            await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(int(pid_file.read_text()))
