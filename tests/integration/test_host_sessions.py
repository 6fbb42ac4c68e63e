"""Sessions in the per-user host, as a person sees them in a real terminal (tmux): `agent --bg`
starts one in a worktree of its own and prints its id, `agent sessions` lists it live beside the
saved ones, `agent attach` (its picker) opens the app on it with its history and the running turn
live, `/detach` leaves it running (a session of the terminal moves to the host), `agent sessions
stop` ends one with every process it started, and the host ends once no session is left: all
checked by PID. The model is the scripted fake server."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from tests.conftest import git_init, run_agent
from tests.fake_server import Reply, ToolCall
from tests.host_helpers import end_host, host_env, host_pid
from tests.processes import alive, pids_running
from tests.tmux_terminal import TmuxTerminal, agent_command
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.timeout(240),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
]
RELEASE = "while [ ! -e {go} ]; do sleep 0.05; done; echo released"
MODEL = ["--provider", "openai-chat", "-m", "test-model"]


def in_terminal(args: list[str], cwd: Path, env: dict[str, str]) -> TmuxTerminal:
    """`agent ARGS` in tmux; the window stays once it has ended, with what it printed last."""
    return TmuxTerminal(agent_command(args) + "; echo agent ended; sleep 600", cwd, env, width=110, height=36)


@pytest.fixture
def repo(tmp_path) -> Path:
    root = git_init(tmp_path / "repo")
    (root / "README.md").write_text("# repo\n")
    subprocess.run(["git", "add", "."], cwd=root, check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@e", "commit", "-qm", "init"], cwd=root, check=True)
    return root


@pytest.fixture
def env(server, tmp_path):
    env = host_env(server, tmp_path)
    yield env
    end_host(env)


def live_rows(env: dict[str, str], cwd: Path) -> list[str]:
    listed = run_agent(["sessions"], cwd=cwd, env=env)
    assert listed.returncode == 0, listed.stderr
    head, _, _ = listed.stdout.partition("\nWatch one with")
    return head.splitlines()[1:] if head.startswith("LIVE IN THE HOST") else []


def test_a_background_session_is_attached_to_seen_live_detached_and_stopped(server, repo, env, tmp_path):
    go = tmp_path / "go"
    server.script(
        Reply(text="starting on it", tool_calls=[ToolCall("shell", {"command": RELEASE.format(go=go)})]),
        Reply(text="all done after the release"),
        Reply(text="slept", tool_calls=[ToolCall("shell", {"command": "sleep 31.7"})]),
    )
    started = run_agent(
        ["--bg", *MODEL, "-a", "never", "-s", "danger-full-access", "wait for the go"], cwd=repo, env=env
    )
    assert started.returncode == 0, started.stderr
    thread_id = started.stdout.strip()
    assert len(thread_id) == 36 and "created worktree" in started.stderr  # a worktree of its own
    host = host_pid(env)
    assert host is not None and alive(host)
    wait_for(lambda: any(row.startswith("running") for row in live_rows(env, repo)), 60, "it to run")
    (row,) = live_rows(env, repo)
    assert "wait for the go" in row
    listed = run_agent(["sessions"], cwd=repo, env=env).stdout
    assert "wait for the go" in listed.split("\nWatch one with")[1]  # and among the saved ones

    terminal = in_terminal(["attach"], repo, env)
    try:
        terminal.wait_for_text("Attach to a session running in the host (1)")
        assert "running" in terminal.screen()
        terminal.keys("Enter")
        terminal.wait_for_text("starting on it")  # the history so far, then the turn as it stands
        screen = terminal.wait_for_text("running…")
        assert "wait for the go" in screen
        go.touch()
        terminal.wait_for_text("all done after the release")  # the rest of the turn, live
        terminal.type("/detach")
        terminal.keys("Enter")
        screen = terminal.wait_for_text(f"back to it with: agent attach {thread_id}")
        assert f"session {thread_id} goes on in the host" in screen
    finally:
        terminal.close()
    (row,) = live_rows(env, repo)
    assert row.startswith("idle")

    # A turn that runs a command, stopped from the command line: the command ends with it.
    other = in_terminal(["attach", thread_id], repo, env)
    try:
        other.wait_for_text("all done after the release")
        other.type("now sleep")
        other.keys("Enter")
        wait_for(lambda: pids_running("sleep", "31.7"), 60, "the command to start")
        (sleeper,) = pids_running("sleep", "31.7")
        stopped = run_agent(["sessions", "stop", thread_id], cwd=repo, env=env)
        assert stopped.returncode == 0, stopped.stderr
        wait_for(lambda: not alive(sleeper), 30, "the stopped session's command to end")
        other.wait_for_text("closed this session")  # the app says why, and leaves
    finally:
        other.close()
    assert live_rows(env, repo) == []
    wait_for(lambda: not alive(host), 60, "the host to end once no session is left")
    assert host_pid(env) is None


def test_detach_moves_a_terminal_session_to_the_host_and_attach_finds_it(server, repo, env, tmp_path):
    go = tmp_path / "go"
    server.script(
        Reply(text="first answer, in the terminal"),
        Reply(text="working in the host", tool_calls=[ToolCall("shell", {"command": RELEASE.format(go=go)})]),
        Reply(text="finished in the host"),
    )
    terminal = in_terminal([*MODEL, "-a", "never", "-s", "danger-full-access"], repo, env)
    try:
        terminal.wait_for_text("Ask anything")
        terminal.type("hello")
        terminal.keys("Enter")
        terminal.wait_for_text("first answer, in the terminal")
        terminal.type("/detach keep going")
        terminal.keys("Enter")
        screen = terminal.wait_for_text("back to it with: agent attach ")
        assert "goes on in the background host" in screen
        thread_id = screen.split("agent attach ", 1)[1].split()[0]
    finally:
        terminal.close()
    wait_for(lambda: pids_running("sh", "-c", RELEASE.format(go=go)) or _running(env, repo), 60, "it to run there")

    attached = in_terminal(["attach", thread_id], repo, env)
    try:
        attached.wait_for_text("first answer, in the terminal")  # the history the terminal had
        attached.wait_for_text("working in the host")
        go.touch()
        attached.wait_for_text("finished in the host")
        attached.keys("C-c")
        attached.keys("C-c")
        attached.wait_for_text(f"agent attach {thread_id}")  # left running; how to come back
    finally:
        attached.close()
    resumed = [r for r in live_rows(env, repo) if r.startswith("idle")]
    assert len(resumed) == 1 and "hello" in resumed[0]


def _running(env: dict[str, str], repo: Path) -> bool:
    return any(row.startswith("running") for row in live_rows(env, repo))


def test_what_cannot_start_says_why_and_starts_nothing(repo, env, tmp_path):
    plain = tmp_path / "not-a-repository"
    plain.mkdir()
    outside = run_agent(["--bg", *MODEL, "do it"], cwd=plain, env=env)
    assert outside.returncode == 2 and "--no-worktree runs it here" in outside.stderr
    empty = run_agent(["--bg", *MODEL], cwd=repo, env=env)
    assert empty.returncode == 2 and "--bg needs a prompt" in empty.stderr
    unsupported = run_agent(["--bg", *MODEL, "--mode", "ask", "do it"], cwd=repo, env=env)
    assert unsupported.returncode == 2 and "agent or plan mode" in unsupported.stderr
    assert host_pid(env) is None  # none of them started a host
    nothing = run_agent(["attach"], cwd=repo, env=env)
    assert nothing.returncode == 2 and "no host runs" in nothing.stderr
    assert run_agent(["sessions", "stop", "abc"], cwd=repo, env=env).returncode == 2
    assert host_pid(env) is None  # asking about live sessions never starts one


def test_a_session_the_host_refuses_leaves_no_worktree_behind(repo, env):
    no_key = {name: value for name, value in env.items() if name != "OPENAI_API_KEY"}
    refused = run_agent(["--bg", *MODEL, "do it"], cwd=repo, env=no_key)
    assert refused.returncode == 2 and "OPENAI_API_KEY is not set" in refused.stderr
    assert "created worktree" in refused.stderr
    listed = subprocess.run(["git", "worktree", "list"], cwd=repo, capture_output=True, text=True, check=True)
    assert len(listed.stdout.splitlines()) == 1, listed.stdout  # the one it made went again


def test_a_background_session_waiting_for_approval_is_answered_from_the_picker(server, repo, env):
    server.script(
        Reply(text="asking", tool_calls=[ToolCall("shell", {"command": "touch made-by-the-host.txt"})]),
        Reply(text="made it after the yes"),
    )
    started = run_agent(["--bg", *MODEL, "-a", "untrusted", "make the file"], cwd=repo, env=env)
    assert started.returncode == 0, started.stderr
    wait_for(lambda: any(r.startswith("waiting for approval") for r in live_rows(env, repo)), 60, "the question")
    terminal = in_terminal(["attach"], repo, env)
    try:
        terminal.wait_for_text("Attach to a session running in the host (1)")
        assert "waiting for approval" in terminal.screen()
        terminal.keys("Enter")
        terminal.wait_for_text("Allow the agent to run this shell command?")  # the question it left open
        terminal.wait_for_text("touch made-by-the-host.txt")
        wait_for(lambda: "keys wait until you stop typing" not in terminal.screen(), 30, "the dialog to take keys")
        terminal.keys("y")
        terminal.wait_for_text("made it after the yes")
    finally:
        terminal.close()
    (row,) = live_rows(env, repo)
    assert row.startswith("idle")
