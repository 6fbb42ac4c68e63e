"""`agent exec` never leaves a login profile's lock behind (issue 27, item 11): a profile that
takes a lock the way pyenv's rehash does, ended early by exec finishing, by Ctrl+C, SIGTERM or
SIGHUP. (Past the snapshot's own limit: tests/unit/test_shell_snapshot.py.)"""

from __future__ import annotations

import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import agent_process_env, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.processes import alive
from tests.unit.test_shell_snapshot import locking_profile

EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model"]


@pytest.fixture
def home(tmp_path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    locking_profile(home)
    return home


def wait_for(path: Path, within: float = 60.0) -> int:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return int(path.read_text())
        time.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


def gone(pid: int, within: float = 20.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def test_exec_that_ends_before_the_profile_leaves_no_lock(server, tmp_path, home):
    server.script(Reply(text="done"))
    work = tmp_path / "work"
    work.mkdir()
    result = run_agent([*EXEC, "hi"], cwd=work, env={**provider_env(server, "openai-chat"), "HOME": str(home)})
    assert result.returncode == 0, result.stderr
    if (home / "rehash-pid").exists():  # the profile had started: it was let finish its trap
        assert not alive(int((home / "rehash-pid").read_text()))
    assert not (home / ".pyenv-shim").exists()


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_stop_signal_mid_profile_leaves_no_lock(server, tmp_path, home, sig):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo hi"})]), Reply(text="done"))
    work = tmp_path / "work"
    work.mkdir()
    env = agent_process_env(**provider_env(server, "openai-chat"), HOME=str(home))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *EXEC, "go"],
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        pid = wait_for(home / "rehash-pid")
        proc.send_signal(sig)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 128 + sig
    assert gone(pid), f"the profile's rehash {pid} is still running"
    assert not (home / ".pyenv-shim").exists()
