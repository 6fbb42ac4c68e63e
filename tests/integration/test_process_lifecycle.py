"""Every process the agent starts ends with it (issue 27, item 10), under each mechanism and
without one: what a command leaves running (``cmd &``, ``setsid nohup … &``) after a normal finish,
the command when exec gets SIGTERM, SIGHUP or SIGKILL, and an MCP server that ignores SIGTERM and
stdin's EOF. Processes are found by a token in their command line (bubblewrap's PID namespace
hides the host PIDs from the command) and then checked by PID."""

from __future__ import annotations

import contextlib
import itertools
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from agent_cli.sandbox.policy import supervised_argv, working_mechanisms
from tests.conftest import agent_process_env, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.fake_server.server import FakeModelServer
from tests.integration.test_mcp_exec import server_pids
from tests.integration.test_mcp_session import DEMO, server_table
from tests.processes import alive, state
from tests.waiting import wait_for

EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model"]
MECHANISMS = [*working_mechanisms(), "none"]


def sleeper(token: str) -> str:
    return f"{sys.executable} -c 'import time; time.sleep(300)' {token}"


def token_pids(token: str) -> list[int]:
    pids = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes() and alive(int(entry.name)):
                    pids.append(int(entry.name))
            except OSError:
                continue
    return pids


def sleeper_pids(token: str) -> list[int]:
    """The sleepers themselves: the sandbox and the launcher carry the token in their command
    lines too, long before the command runs."""
    start = f"{sys.executable}\0-c\0".encode()
    return [pid for pid in token_pids(token) if _cmdline(pid).startswith(start)]


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def all_gone(pids: list[int], within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if not any(alive(pid) for pid in pids):
            return True
        time.sleep(0.05)
    return False


def start_exec(server, cwd: Path, mechanism: str, prompt: str = "go") -> subprocess.Popen:
    env = agent_process_env(**provider_env(server, "openai-chat"), AGENT_SANDBOX_MECHANISM=mechanism)
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *EXEC, prompt],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_background_jobs_do_not_outlive_their_command(server, tmp_path, mechanism):
    token = uuid.uuid4().hex
    command = f"{sleeper(token + '-bg')} & setsid nohup {sleeper(token + '-setsid')} > /dev/null 2>&1 & sleep 0.5; echo started"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": command})]), Reply(text="done"))
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    result = run_agent([*EXEC, "go"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "started" in server.requests[-1].body["messages"][-1]["content"]
    assert all_gone(token_pids(token)), token_pids(token)


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP, signal.SIGKILL])
def test_a_signal_to_exec_ends_the_running_command(server, tmp_path, mechanism, sig):
    token = uuid.uuid4().hex
    command = f"setsid nohup {sleeper(token + '-setsid')} > /dev/null 2>&1 & {sleeper(token + '-fg')}"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": command})]), Reply(text="done"))
    proc = start_exec(server, tmp_path, mechanism)
    try:
        wait_for(
            lambda: sleeper_pids(token + "-fg") and sleeper_pids(token + "-setsid"), within=60, what="both sleepers"
        )
        pids = token_pids(token)  # the sleepers, bash, bubblewrap and the launcher
        proc.send_signal(sig)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    if sig != signal.SIGKILL:
        assert proc.returncode == 128 + sig
    assert all_gone(pids), [pid for pid in pids if alive(pid)]


def test_the_supervisor_cleans_up_through_a_volley_of_death_signals(tmp_path):
    """The agent's death reaches the supervisor once per thread of the agent (the parent-death
    signal follows each exiting thread): the second must not cut the first one's clean-up short."""
    token = uuid.uuid4().hex
    command = f"setsid nohup {sleeper(token + '-setsid')} > /dev/null 2>&1 & {sleeper(token + '-fg')}"
    launcher = subprocess.Popen(supervised_argv(["bash", "-c", command]), cwd=tmp_path, start_new_session=True)
    try:
        wait_for(
            lambda: sleeper_pids(token + "-fg") and sleeper_pids(token + "-setsid"), within=60, what="both sleepers"
        )
        pids = token_pids(token)
        gaps = itertools.cycle(range(0, 60, 3))
        while launcher.poll() is None:  # one after another, microseconds apart
            os.kill(launcher.pid, signal.SIGTERM)
            end = time.perf_counter() + next(gaps) / 1e6
            while time.perf_counter() < end:
                pass
    finally:
        launcher.kill()
        launcher.wait()
    assert launcher.returncode == 128 + signal.SIGTERM
    assert all_gone(pids), [pid for pid in pids if alive(pid)]


@pytest.mark.skipif("bubblewrap" not in MECHANISMS, reason="bubblewrap does not work here")
def test_exec_killed_while_bubblewrap_builds_the_sandbox_leaves_nothing(tmp_path):
    """Bubblewrap binds the namespace's first process to its parent only once the namespace is
    built. That process is held (SIGSTOP) before it starts the command, exec is killed, then it is
    let go: the command must never run on, orphaned."""
    for _attempt in range(5):  # the hold can come too late (the command had started): again
        token = uuid.uuid4().hex
        server = FakeModelServer().start()  # a new script each time: a killed exec leaves its end
        server.script(Reply(tool_calls=[ToolCall("shell", {"command": sleeper(token)})]))
        proc = start_exec(server, tmp_path, "bubblewrap")
        held = None
        try:
            held = hold_the_namespace_before_its_command(proc.pid, token)
            pids = token_pids(token)
            proc.kill()
            proc.communicate(timeout=60)
            if held:
                with contextlib.suppress(ProcessLookupError):  # it may be gone already
                    os.kill(held, signal.SIGCONT)
            gone = all_gone(pids)
            left = sleeper_pids(token)
        finally:
            proc.kill()
            server.stop()
            for pid in token_pids(token):  # what a failure left behind
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
        assert gone and not left, f"left running: {[pid for pid in pids if alive(pid)]}, the command {left}"
        if held:
            return
    pytest.fail("bubblewrap was never caught before it started the command")


def hold_the_namespace_before_its_command(agent: int, token: str) -> int | None:
    """Stop bubblewrap's process inside the new PID namespace before it forks the command; its
    pid, or None when it had forked already (it is let go then). Watched tightly from the
    agent down: the namespace is built in a few milliseconds."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        for pid in _descendants(agent):
            if len(_nspids(pid)) == 2 and token.encode() in _cmdline(pid):  # the namespace's first process
                os.kill(pid, signal.SIGSTOP)
                wait_for(lambda: state(pid) in ("T", "Z", None), within=10, what="bubblewrap to stop")
                if not _descendants(pid):
                    return pid
                os.kill(pid, signal.SIGCONT)
                return None
    raise AssertionError("bubblewrap never started")


def _descendants(pid: int) -> list[int]:
    found = []
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:  # it ended
        return found
    for task in tasks:
        try:
            children = [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
        for child in children:
            found += [child, *_descendants(child)]
    return found


def _nspids(pid: int) -> list[str]:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return []
    return next((line.split()[1:] for line in status.splitlines() if line.startswith("NSpid:")), [])


@pytest.mark.parametrize("sig", [None, signal.SIGKILL])
def test_an_mcp_server_that_ignores_sigterm_and_eof_dies(server, tmp_path, isolated_home, sig):
    (isolated_home / "config.toml").write_text(server_table("demo", [*DEMO, "--stubborn"]))
    server.script(Reply(tool_calls=[ToolCall("mcp__demo__slow", {"seconds": 60})]) if sig else Reply(text="done"))
    proc = start_exec(server, tmp_path, "none")
    try:
        log = isolated_home / "logs" / "mcp-demo.log"
        [pid] = wait_for(lambda: log.exists() and server_pids(isolated_home), within=60, what="the MCP server")
        if sig:  # killed in the middle of the call
            wait_for(lambda: "slow call started" in log.read_text(), within=60, what="the call to reach the server")
            proc.send_signal(sig)
        proc.communicate(timeout=90)
    finally:
        proc.kill()
    assert all_gone([pid]), f"the MCP server {pid} survived"


def test_nohup_exec_keeps_ignoring_sighup(server, tmp_path):
    token = uuid.uuid4().hex
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": f"{sleeper(token)} & sleep 3; echo survived"})]),
        Reply(text="done"),
    )
    env = agent_process_env(**provider_env(server, "openai-chat"))
    proc = subprocess.Popen(
        ["nohup", sys.executable, "-m", "agent_cli", *EXEC, "go"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        wait_for(lambda: sleeper_pids(token), within=60, what="the sleeper")
        proc.send_signal(signal.SIGHUP)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert "survived" in server.requests[-1].body["messages"][-1]["content"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_exec_whose_reader_leaves_ends_with_its_command(server, tmp_path, mechanism):
    """`agent exec … | head -1`, or a terminal closed around a pipeline: stdout's reader goes away
    while a command runs, and exec ends then (as for SIGPIPE), not when it next writes."""
    token = uuid.uuid4().hex
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": sleeper(token)})]), Reply(text="done"))
    proc = start_exec(server, tmp_path, mechanism)
    try:
        wait_for(lambda: sleeper_pids(token), within=60, what="the sleeper")
        pids = token_pids(token)
        proc.stdout.close()  # the reader leaves
        assert proc.wait(timeout=60) == 128 + signal.SIGPIPE
    finally:
        proc.kill()
        proc.wait()
    assert all_gone(pids), [pid for pid in pids if alive(pid)]


def test_acp_whose_client_stops_reading_ends(server, tmp_path):
    """An editor that closes our output (and not our input) is gone too: `agent acp` ends."""
    env = agent_process_env(**provider_env(server, "openai-chat"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "acp", "-m", "test-model"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    try:
        proc.stdout.close()
        proc.wait(timeout=60)
    finally:
        proc.kill()
        proc.wait()
        proc.stdin.close()
