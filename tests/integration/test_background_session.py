"""Background commands in a real session: start, read new output twice, kill, exit notices, cleanup by PID."""

from __future__ import annotations

import re
import textwrap

import pytest

from agent_cli import events as ev
from agent_cli.sandbox.policy import detect_mechanism
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, gone
from tests.session_helpers import collect_events, make_session
from tests.waiting import until

DEV_SERVER = textwrap.dedent("""
    import itertools, socket, sys, time
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    print("listening on", listener.getsockname()[1], flush=True)
    for n in itertools.count():
        print(f"tick {n}", flush=True)
        time.sleep(0.02)
""")


def tool_outputs(server) -> list[str]:
    """Each tool output the model was sent, in order (chat wire format)."""
    last = server.requests[-1].body["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


def ticks(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"^tick (\d+)$", text, re.MULTILINE)]


@pytest.mark.parametrize("sandbox", ["workspace-write", "danger-full-access"])
async def test_a_dev_server_started_read_twice_and_killed(server, tmp_path, monkeypatch, sandbox):
    if sandbox != "danger-full-access" and detect_mechanism().name == "landlock":
        pytest.skip(
            "only bubblewrap gives a sandboxed command a network of its own to listen on; under "
            "Landlock every socket but a Unix one is refused (docs/safety.md)"
        )
    (tmp_path / "dev.py").write_text(DEV_SERVER)
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "python3 dev.py", "run_in_background": True})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "sleep 0.5"})]),
        Reply(tool_calls=[ToolCall("shell_output", {"id": "bg1"})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "sleep 0.5"})]),
        Reply(tool_calls=[ToolCall("shell_output", {"id": "bg1"})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "sleep 0.5"})]),
        Reply(tool_calls=[ToolCall("shell_output", {"id": "bg1", "filter": "tick \\d*7$"})]),
        Reply(tool_calls=[ToolCall("shell_kill", {"id": "bg1"})]),
        Reply(text="done"),
    )
    session = make_session(server, tmp_path, monkeypatch, f'sandbox_mode="{sandbox}"')
    try:
        events = await collect_events(session, "start the dev server")
        assert isinstance(events[-1], ev.TurnComplete)
        started, _, first, _, second, _, filtered, killed = tool_outputs(server)
        proc = session.background.get("bg1")
        assert f"Started in the background as bg1 (pid {proc.pid})" in started
        assert "listening on" in started  # the first output arrives with the start
        assert "running" in first and ticks(first)
        assert ticks(second) and min(ticks(second)) > max(ticks(first))  # only what is new
        assert ticks(filtered) and all(n % 10 == 7 for n in ticks(filtered))
        assert "Stopped bg1" in killed
        assert await gone(proc.pid)
        assert not proc.running and proc.killed
    finally:
        await session.aclose()


async def test_an_exit_reaches_the_user_at_once_and_the_model_at_its_next_request(server, tmp_path, monkeypatch):
    server.script(
        Reply(
            tool_calls=[ToolCall("shell", {"command": "sleep 1.2; echo finished; exit 3", "run_in_background": True})]
        ),
        Reply(tool_calls=[ToolCall("shell", {"command": "sleep 2.5"})]),
        Reply(text="ok"),
    )
    session = make_session(server, tmp_path, monkeypatch, 'sandbox_mode="danger-full-access"')
    heard: list[ev.Event] = []
    session.background.add_listener(heard.append)
    try:
        await collect_events(session, "go")
        exits = [e for e in heard if isinstance(e, ev.BackgroundProcessExited)]
        assert len(exits) == 1 and exits[0].process.exit_code == 3 and exits[0].process.last_lines == ("finished",)
        last = server.requests[-1].body["messages"]
        notes = [m["content"] for m in last if m["role"] == "user" and "<background_processes>" in m["content"]]
        assert len(notes) == 1 and "bg1" in notes[0] and "exited with code 3" in notes[0]
        # appended after the tool output, never edited into an earlier message
        assert last.index(
            next(m for m in last if m["role"] == "user" and "<background_processes>" in m["content"])
        ) > max(i for i, m in enumerate(last) if m["role"] == "tool")
        earlier = server.requests[-2].body["messages"]
        assert last[: len(earlier)] == earlier  # the prefix is byte-stable
    finally:
        await session.aclose()


async def test_session_end_kills_every_background_process_and_what_it_daemonized(server, tmp_path, monkeypatch):
    command = "setsid sh -c 'echo $$ > daemon.pid; exec sleep 300' & echo $$ > shell.pid; sleep 300"
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": command, "run_in_background": True})]), Reply(text="started")
    )
    session = make_session(server, tmp_path, monkeypatch, 'sandbox_mode="danger-full-access"')
    await collect_events(session, "go")
    shell_pid, daemon_pid = [
        int(await until(lambda: (tmp_path / name).exists() and (tmp_path / name).read_text(), within=5, what=name))
        for name in ("shell.pid", "daemon.pid")
    ]
    watchdog = session.background.watchdog_pid
    assert alive(shell_pid) and alive(daemon_pid) and watchdog and alive(watchdog)
    await session.aclose()
    assert await gone(shell_pid) and await gone(daemon_pid)
    assert await gone(watchdog)


async def test_unknown_ids_and_bad_filters_are_errors_the_model_reads(server, tmp_path, monkeypatch):
    server.script(
        Reply(tool_calls=[ToolCall("shell_output", {"id": "bg9"})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "true", "run_in_background": True})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "sleep 0.5"})]),
        Reply(tool_calls=[ToolCall("shell_output", {"id": "bg1", "filter": "("})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "true", "keep_alive": True})]),
        Reply(text="ok"),
    )
    session = make_session(server, tmp_path, monkeypatch, 'sandbox_mode="danger-full-access"')
    try:
        await collect_events(session, "go")
        missing, _, _, bad_filter, keep_alive = tool_outputs(server)
        assert "no background process 'bg9'" in missing
        assert "not a valid regex" in bad_filter
        assert "only with run_in_background" in keep_alive
    finally:
        await session.aclose()


async def test_keep_alive_needs_the_user_and_exec_cannot_give_it(server, tmp_path, monkeypatch):
    args = {"command": "sleep 300", "run_in_background": True, "keep_alive": True}
    server.script(Reply(tool_calls=[ToolCall("shell", args)]), Reply(text="ok"))
    session = make_session(server, tmp_path, monkeypatch, 'sandbox_mode="danger-full-access"')
    try:
        await collect_events(session, "go")
        (denied,) = tool_outputs(server)
        assert "keep_alive" in denied and "cannot ask" in denied
        assert session.background.list() == []
    finally:
        await session.aclose()


async def test_keep_alive_approved_by_the_user_outlives_the_session(server, tmp_path, monkeypatch):
    args = {"command": "echo $$ > kept.pid; exec sleep 300", "run_in_background": True, "keep_alive": True}
    server.script(Reply(tool_calls=[ToolCall("shell", args)]), Reply(text="ok"))
    session = make_session(server, tmp_path, monkeypatch, 'sandbox_mode="danger-full-access"', interactive=True)
    events = await collect_events(session, "go", answer="approve")
    assert any(isinstance(e, ev.ApprovalRequest) and "after the session ends" in (e.reason or "") for e in events)
    pid = session.background.get("bg1").pid
    await session.aclose()
    try:
        assert alive(pid)
    finally:
        import os
        import signal

        os.killpg(pid, signal.SIGKILL)
    assert await gone(pid)


async def test_a_background_command_sees_the_tree_as_it_is_and_what_it_plants_is_undone(server, tmp_path, monkeypatch):
    """No placeholder folders while a background command runs (issue 51: they showed the model an
    `.agent/` and an `.mcp.json/` the user did not have); an `.agent/` it makes is moved away when it
    ends, and the model hears so with its exit note."""
    if detect_mechanism().name == "none":
        pytest.skip("no sandbox mechanism on this machine")
    command = "ls -a; mkdir .agent && echo '[[hooks.Stop]]' > .agent/config.toml; sleep 0.3"
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": command, "run_in_background": True})]), Reply(text="started")
    )
    session = make_session(server, tmp_path, monkeypatch, 'sandbox_mode="workspace-write"')
    try:
        await collect_events(session, "start it")
        assert not (tmp_path / ".mcp.json").exists() and not (tmp_path / ".claude").exists()
        process = session.background.get("bg1")
        await until(lambda: process.exit_code is not None and process.refused, within=20, what="the command to end")
        assert not (tmp_path / ".agent").exists()
        assert any(".agent is protected" in line for line in process.refused)
    finally:
        await session.aclose()
    assert not (tmp_path / ".agent").exists() and not (tmp_path / ".mcp.json").exists()
