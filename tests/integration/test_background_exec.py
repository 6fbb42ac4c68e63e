"""`agent exec` with background processes: all gone by PID when exec ends, on Ctrl+C and on SIGKILL."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tests.conftest import REPO, provider_env
from tests.fake_server import Reply, ToolCall
from tests.processes import alive

# The shell, and a daemon it started that left the process group with setsid.
COMMAND = (
    "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' & "
    "while [ ! -s daemon.pid ]; do sleep 0.01; done; echo $$ > shell.pid; echo started; exec sleep 300"
)


def wait_gone(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def start_exec(server, tmp_path, sandbox: str, mechanism: str | None = None) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **provider_env(server, "openai-chat")}
    if mechanism:
        env["AGENT_SANDBOX_MECHANISM"] = mechanism
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_cli",
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "--json",
            "-c",
            f'sandbox_mode="{sandbox}"',
            "start it",
        ],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def sleepers_in(folder) -> list[int]:
    """Host PIDs of the `sleep 300` processes working in ``folder`` (a sandbox's PID namespace
    numbers them differently, so they are found by their working directory)."""
    found = []
    for name in os.listdir("/proc"):
        try:
            if name.isdigit() and os.readlink(f"/proc/{name}/cwd") == str(folder):
                if open(f"/proc/{name}/cmdline", "rb").read().split(b"\0")[:2] == [b"sleep", b"300"]:
                    found.append(int(name))
        except OSError:
            continue
    return found


def pids_after_start(proc: subprocess.Popen, tmp_path) -> tuple[int, int]:
    for line in proc.stdout:  # the start's tool output has arrived once the item completes
        if '"item.completed"' in line and "bg1" in line:
            break
    shell, daemon = sleepers_in(tmp_path)  # the shell exec'd into one, the daemon is the other
    return shell, daemon


SANDBOXES = [("workspace-write", "bubblewrap"), ("workspace-write", "landlock"), ("danger-full-access", None)]


@pytest.mark.parametrize(("sandbox", "mechanism"), SANDBOXES)
def test_exec_ending_normally_ends_them(server, tmp_path, sandbox, mechanism):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": COMMAND, "run_in_background": True})]), Reply(text="started it")
    )
    proc = start_exec(server, tmp_path, sandbox, mechanism)
    shell, daemon = pids_after_start(proc, tmp_path)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert wait_gone(shell) and wait_gone(daemon)


def test_ctrl_c_ends_them(server, tmp_path):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": COMMAND, "run_in_background": True})]),
        Reply(text="slow " * 100, chunk_size=1, delay=1.0),
    )
    proc = start_exec(server, tmp_path, "danger-full-access")
    shell, daemon = pids_after_start(proc, tmp_path)
    assert alive(shell) and alive(daemon)
    proc.send_signal(signal.SIGINT)
    proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert wait_gone(shell) and wait_gone(daemon)


@pytest.mark.parametrize(("sandbox", "mechanism"), SANDBOXES)
def test_sigkill_of_the_agent_ends_them_through_the_watchdog(server, tmp_path, sandbox, mechanism):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": COMMAND, "run_in_background": True})]),
        Reply(text="slow " * 100, chunk_size=1, delay=1.0),
    )
    proc = start_exec(server, tmp_path, sandbox, mechanism)
    shell, daemon = pids_after_start(proc, tmp_path)
    assert alive(shell) and alive(daemon)
    proc.kill()
    proc.communicate(timeout=60)
    assert wait_gone(shell) and wait_gone(daemon)


def test_an_exit_is_shown_at_once_in_json(server, tmp_path):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "sleep 1.2; exit 4", "run_in_background": True})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "sleep 2.5"})]),
        Reply(text="ok"),
    )
    proc = start_exec(server, tmp_path, "danger-full-access")
    out, err = proc.communicate(timeout=60)
    notices = [json.loads(line)["item"] for line in out.splitlines() if '"notice"' in line]
    assert any("bg1" in item["text"] and "exited with code 4" in item["text"] for item in notices), out
