"""The real TUI in a pseudo-terminal: SIGTERM and SIGHUP (the terminal closed) end it the way
quitting does, so the command it is running ends too, also without a sandbox."""

from __future__ import annotations

import asyncio
import os
import pty
import signal
import subprocess
import sys
import threading

import pytest

from tests.conftest import REPO, provider_env
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, started


@pytest.mark.parametrize("signum, duration", [(signal.SIGTERM, "31.0505"), (signal.SIGHUP, "31.0606")])
def test_a_signal_quits_the_tui_and_stops_its_command(server, tmp_path, signum, duration):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"sleep {duration}"})]), Reply(text="done"))
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", **provider_env(server, "openai")}
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_cli",
            "--provider",
            "openai",
            "-m",
            "test-model",
            "-a",
            "never",
            "-s",
            "danger-full-access",
            "wait",
        ],
        cwd=tmp_path,
        env=env,
        stdin=secondary,
        stdout=secondary,
        stderr=secondary,
        start_new_session=True,
    )
    os.close(secondary)
    threading.Thread(target=drain, args=(primary,), daemon=True).start()  # the screen, never read
    pid = None
    try:
        pid = asyncio.run(started("sleep", duration, within=60))
        proc.send_signal(signum)
        assert proc.wait(timeout=30) == 128 + signum
        assert not alive(pid)
    finally:
        if proc.poll() is None:
            proc.kill()
        if pid is not None and alive(pid):  # the defect this test catches: leave nothing behind
            os.kill(pid, signal.SIGKILL)


def drain(fd: int) -> None:
    try:
        while os.read(fd, 65536):
            pass
    except OSError:
        pass
