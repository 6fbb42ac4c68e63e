"""Hooks, the status line and notify start their programs through one helper (tools/process.py's
``run_supervised``): a program past its limit is stopped with what it started and is reported as
slow, not as a program that could not start (TimeoutError is an OSError too)."""

from __future__ import annotations

import asyncio

import pytest

from agent_cli import events as ev
from agent_cli.session import notify
from agent_cli.status_line import runner
from agent_cli.tools.process import run_supervised
from tests.processes import gone
from tests.unit.test_hooks import make_session

BACKGROUND_CHILD = "sleep 30 & echo $! > child.pid; wait"


async def test_a_program_past_its_limit_times_out_and_leaves_nothing_running(tmp_path):
    with pytest.raises(TimeoutError):
        await run_supervised(["/bin/sh", "-c", BACKGROUND_CHILD], cwd=tmp_path, env=None, timeout_s=0.5)
    assert await gone(int((tmp_path / "child.pid").read_text()))


async def test_a_program_that_cannot_start_is_an_os_error(tmp_path):
    with pytest.raises(OSError) as raised:
        await run_supervised(["true"], cwd=tmp_path / "missing", env=None, timeout_s=5)
    assert not isinstance(raised.value, TimeoutError)


async def test_a_slow_status_line_is_reported_as_slow(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "TIMEOUT", 0.5)
    line, problem = await runner.run_status_line(BACKGROUND_CHILD, {}, tmp_path)
    assert (line, problem) == ("", "it took longer than 0.5 s and was stopped")
    assert await gone(int((tmp_path / "child.pid").read_text()))


async def test_a_slow_notify_program_is_reported_as_slow(isolated_home, tmp_path, monkeypatch):
    monkeypatch.setattr(notify, "TIMEOUT", 0.5)
    session = make_session(isolated_home, tmp_path, f"notify = ['/bin/sh', '-c', '{BACKGROUND_CHILD}']\n")
    events: list[ev.Event] = []
    notify.after_turn(session.turn_context(), session.state.hooks, None, True, "hi", "done", events.append)
    await asyncio.gather(*session.state.hooks.background)
    assert [event.message for event in events if isinstance(event, ev.Warning)] == [
        "notify program `/bin/sh` took longer than 0.5 s and was stopped"
    ]
    assert await gone(int((tmp_path / "repo" / "child.pid").read_text()))
