"""`agent exec` through the warm server (agent_cli/warm/): each test has a server of its own (its
socket under a private XDG_RUNTIME_DIR), started by a first cold run as a user's would be, and
ended by PID at the end. A warm run must look like a cold one from outside: output, exit codes,
signals, the environment of that run alone, and no process left behind."""

from __future__ import annotations

import fcntl
import os
import resource
import shutil
import signal
import sys
import uuid
from pathlib import Path

import pytest

from agent_cli.paths import private_dir
from agent_cli.warm.protocol import socket_path
from tests.conftest import REPO
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, pids_running
from tests.waiting import wait_for
from tests.warm_helpers import Warm, children_of, server_pids


@pytest.fixture
def warm(server, tmp_path):
    warm = Warm(server, tmp_path)
    yield warm
    warm.stop()


def test_a_warm_run_answers_like_a_cold_one_and_forks_from_the_server(warm, server):
    daemon = warm.warmed(server)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo $PPID-from-the-command"})]), Reply(text="warm"))
    proc = warm.start("hi")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.strip() == "warm"
    assert "-from-the-command" in server.requests[-1].body["messages"][-1]["content"]
    assert warm.servers() == [daemon]  # the same server served it
    assert len(server.requests) == 3


def test_two_runs_at_once_each_get_their_own_answer(warm, server):
    warm.warmed(server)
    server.fallback = lambda request: Reply(
        text="answer to " + ("first" if "first" in str(request.body["messages"][-1]["content"]) else "second")
    )
    first, second = warm.start("first"), warm.start("second")
    assert first.communicate(timeout=120)[0].strip() == "answer to first"
    assert second.communicate(timeout=120)[0].strip() == "answer to second"
    assert first.returncode == second.returncode == 0


def test_a_key_set_for_one_run_is_used_by_that_run_only(warm, server):
    warm.warmed(server)
    server.script(Reply(text="one"), Reply(text="two"), Reply(text="three"))
    assert warm.run("a").returncode == 0
    assert warm.run("b", env={"OPENAI_API_KEY": "only-for-the-second"}).returncode == 0
    assert warm.run("c").returncode == 0
    keys = [request.headers.get("authorization") for request in server.requests[-3:]]
    assert keys == ["Bearer test-key", "Bearer only-for-the-second", "Bearer test-key"]


@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
def test_a_signal_to_the_launcher_stops_the_run_and_its_command(warm, server, sig):
    warm.warmed(server)
    token = uuid.uuid4().hex
    sleeper = f"{sys.executable} -c 'import time; time.sleep(300)' {token}"

    def reply(request):
        last = request.body["messages"][-1]
        if last["role"] == "user" and "run it" in str(last["content"]):
            return Reply(tool_calls=[ToolCall("shell", {"command": sleeper})])
        return Reply(text="done")

    server.fallback = reply
    other = warm.start("meanwhile")  # another run goes on through the interruption
    proc = warm.start("run it")
    try:
        argv = (sys.executable, "-c", "import time; time.sleep(300)", token)
        [command] = wait_for(lambda: pids_running(*argv), within=60, what="the command")
        proc.send_signal(sig)
        proc.communicate(timeout=60)
        assert proc.returncode == 128 + sig
        wait_for(lambda: not alive(command), within=15, what="the command to end with the run")
    finally:
        proc.kill()
    assert other.communicate(timeout=120)[0].strip() == "done" and other.returncode == 0


def test_the_run_dies_with_its_launcher(warm, server):
    warm.warmed(server)
    token = str(uuid.uuid4().int)  # digits: a valid `sleep` time
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"sleep 301.{token[:4]}"})]))
    daemon = warm.servers()[0]
    proc = warm.start("run it")
    [sleeper] = wait_for(lambda: pids_running("sleep", f"301.{token[:4]}"), within=60, what="the command")
    [child] = children_of(daemon)
    proc.kill()  # SIGKILL: nothing to relay
    proc.wait()
    wait_for(lambda: not alive(child), within=15, what="the forked run to die with its launcher")
    wait_for(lambda: not alive(sleeper), within=15, what="its command too")


def test_exit_codes_pass_through(warm, server):
    warm.warmed(server)
    assert warm.run("--max-turns", "0", "hi").returncode == 2  # a usage error, as cold
    server.script(Reply.http_error(400, message="bad request"))
    assert warm.run("hi").returncode == 1


def test_a_changed_install_is_refused_and_the_server_replaced(warm, server, tmp_path):
    source = tmp_path / "copy"
    for folder in ("agent_cli", "prompts", "skills"):  # an install of its own: the program and its bundled files
        shutil.copytree(REPO / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__"))
    warm.env["PYTHONPATH"] = f"{source}{os.pathsep}{REPO}"
    old = warm.warmed(server)
    (source / "agent_cli" / "items.py").write_text((source / "agent_cli" / "items.py").read_text() + "\n# changed\n")
    server.script(Reply(text="served cold"))
    result = warm.run("hi")
    assert result.returncode == 0 and result.stdout.strip() == "served cold"
    wait_for(lambda: not alive(old), within=15, what="the stale server to quit")
    wait_for(lambda: warm.servers() and warm.servers()[0] != old, within=60, what="a new server for the new code")


def test_no_daemon_and_an_unsafe_folder_run_cold(warm, server):
    server.script(Reply(text="one"), Reply(text="two"))
    assert warm.run("--no-daemon", "hi").stdout.strip() == "one"
    assert warm.run("hi", env={"AGENT_NO_DAEMON": "1"}).stdout.strip() == "two"
    assert warm.servers() == []  # neither started one
    folder = warm.runtime / f"agent-cli-{os.getuid()}"
    folder.mkdir(mode=0o755)
    folder.chmod(0o755)  # readable by others: never used
    server.script(Reply(text="three"))
    assert warm.run("hi").stdout.strip() == "three"
    assert not list(folder.glob("warm-*.sock"))


def last_content(server) -> str:
    return str(server.requests[-1].body["messages"][-1]["content"])


def test_piped_stdin_reaches_the_run_byte_for_byte(warm, server):
    warm.warmed(server)
    server.script(Reply(text="read"))
    result = warm.run("-", input="line one\r\nline two\n")
    assert result.returncode == 0, result.stderr
    assert "line one\r\nline two" in last_content(server)  # no newline translation, as cold


def test_nohup_is_inherited_by_the_run(warm, server):
    warm.warmed(server)
    token = str(uuid.uuid4().int)  # digits: a valid `sleep` time
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": f"sleep 2.{token[:4]}; echo survived"})]), Reply(text="done")
    )
    proc = warm.start("go", prefix=("nohup",))
    try:
        wait_for(lambda: pids_running("sleep", f"2.{token[:4]}"), within=60, what="the command")
        proc.send_signal(signal.SIGHUP)
        proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 0
    assert "survived" in last_content(server)


def test_ctrl_c_stops_a_run_started_with_it_ignored_as_a_cold_one(warm, server):
    """A script's background job (`agent exec … &`) inherits SIGINT ignored; a cold exec stops on
    it all the same (headless/exec.py), and so does a warm one."""
    warm.warmed(server)
    token = str(uuid.uuid4().int)  # digits: a valid `sleep` time
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"sleep 302.{token[:4]}"})]))
    proc = warm.start("go", preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    try:
        [command] = wait_for(lambda: pids_running("sleep", f"302.{token[:4]}"), within=60, what="the command")
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        assert proc.returncode == 128 + signal.SIGINT
        wait_for(lambda: not alive(command), within=15, what="the command to end with the run")
    finally:
        proc.kill()


def test_the_callers_limits_are_the_runs(warm, server):
    warm.warmed(server)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "ulimit -n"})]), Reply(text="done"))
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    lowered = min(soft, 777)
    result = warm.run("go", preexec_fn=lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (lowered, hard)))
    assert result.returncode == 0, result.stderr
    assert str(lowered) in last_content(server)


def test_ctrl_z_stops_the_run_and_fg_resumes_it(warm, server):
    warm.warmed(server)
    token = str(uuid.uuid4().int)  # digits: a valid `sleep` time
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"sleep 3.{token[:4]}"})]), Reply(text="resumed"))
    daemon = warm.servers()[0]
    proc = warm.start(
        "go", process_group=0
    )  # a job of its own, as a shell starts it (an orphaned group ignores Ctrl+Z)
    try:
        wait_for(lambda: pids_running("sleep", f"3.{token[:4]}"), within=60, what="the command")
        [child] = children_of(daemon)
        proc.send_signal(signal.SIGTSTP)
        wait_for(lambda: state_of(child) == "T" and state_of(proc.pid) == "T", within=15, what="both to stop")
        os.kill(proc.pid, signal.SIGCONT)
        out, _ = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert proc.returncode == 0 and out.strip() == "resumed"


def state_of(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return ""


def test_a_stopped_server_lets_the_runs_it_began_finish(warm, server):
    daemon = warm.warmed(server)
    token = str(uuid.uuid4().int)  # digits: a valid `sleep` time
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"sleep 2.{token[:4]}"})]), Reply(text="finished"))
    proc = warm.start("go")
    wait_for(lambda: pids_running("sleep", f"2.{token[:4]}"), within=60, what="the command")
    os.kill(daemon, signal.SIGTERM)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert out.strip() == "finished"
    wait_for(lambda: not alive(daemon), within=15, what="the server to end after its run")
    assert not list((warm.runtime / f"agent-cli-{os.getuid()}").glob("warm-*.sock"))


def test_exec_daemon_false_in_the_config_runs_cold(warm, server, isolated_home):
    (isolated_home / "config.toml").write_text("exec_daemon = false\n")
    server.script(Reply(text="one"), Reply(text="two"))
    assert warm.run("hi").stdout.strip() == "one"
    assert warm.run("hi").stdout.strip() == "two"
    assert warm.servers() == []


def test_a_run_starts_no_server_while_another_is_starting(warm, server, monkeypatch):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(warm.runtime))
    path = socket_path()  # this interpreter and install: the launcher's own
    assert private_dir(path.parent)
    lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)  # as a server starting (or running) holds it
        server.script(Reply(text="cold"))
        assert warm.run("hi").stdout.strip() == "cold"
        assert server_pids(path) == []  # spawned before the launcher's exit, had it started one
    finally:
        os.close(lock)
    daemon = warm.warmed(server)  # the lock free: the next cold run starts one
    assert server_pids(path) == [daemon]


def test_runs_ending_at_once_start_one_server(warm, server):
    server.fallback = lambda request: Reply(text="ok")
    runs = [warm.start(f"run {n}") for n in range(3)]
    assert all(run.communicate(timeout=120)[0].strip() == "ok" for run in runs)
    wait_for(lambda: warm.servers() and warm.socket_answers(), within=60, what="a warm server")
    assert len(warm.servers()) == 1
