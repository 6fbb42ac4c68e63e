"""Resume: in-process, through `agent exec resume`, after a SIGKILL, and with bad session files."""

from __future__ import annotations

import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.config import load_config
from agent_cli.context.history import ABORTED_OUTPUT
from agent_cli.headless.sessions_cmd import pick_session
from agent_cli.items import ToolCall as ItemToolCall
from agent_cli.items import ToolOutput, user
from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from agent_cli.store.rollout import FORMAT_VERSION, load_session_file
from tests.conftest import agent_process_env, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.processes import pids_running
from tests.session_helpers import collect_events
from tests.waiting import wait_for

EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model"]


def messages(request) -> list[dict]:
    return request.body["messages"]


def session_files(home: Path) -> list[Path]:
    return sorted((home / "sessions").rglob("*.jsonl"))


def make_config(server, repo: Path, monkeypatch, *overrides: str):
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    repo.mkdir(exist_ok=True)
    return load_config(repo, ['model_provider="openai-chat"', 'model="test-model"', "retry_max_attempts=1", *overrides])


# --- in process ----------------------------------------------------------------------------


async def test_a_restored_session_sends_the_same_history_and_appends_to_the_same_file(server, tmp_path, monkeypatch):
    config = make_config(server, tmp_path / "repo", monkeypatch)
    first = open_session(config, interactive=False)
    server.script(Reply(text="looking", tool_calls=[ToolCall("shell", {"command": "echo hi"})]), Reply(text="said hi"))
    await collect_events(first, "say hi")
    first.rollout.close()
    path = first.rollout.path

    restored = restore(open_session(config, interactive=False), path)
    assert restored.id == first.id and restored.history.items == first.history.items
    assert restored.resumed.restored_items == len(first.history) and restored.resumed.closed_calls == 0
    server.script(Reply(text="again"))
    await collect_events(restored, "continue")
    before, after = messages(server.requests[1]), messages(server.requests[2])
    assert after[: len(before)] == before  # the prefix is byte-identical: no second initial context
    assert after[len(before) :] == [
        {"role": "assistant", "content": "said hi"},
        {"role": "user", "content": "continue"},
    ]
    assert session_files(config.agent_home) == [path]
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in records].count("session") == 1
    assert load_session_file(path).items == tuple(restored.history.items)


async def test_an_environment_change_is_appended_as_a_fragment(server, tmp_path, monkeypatch):
    config = make_config(server, tmp_path / "repo", monkeypatch, 'approval_policy="on-request"')
    first = open_session(config, interactive=False)
    server.script(Reply(text="one"))
    await collect_events(first, "hi")
    first.rollout.close()

    changed = make_config(server, tmp_path / "repo", monkeypatch, 'approval_policy="untrusted"')
    restored = restore(open_session(changed, interactive=False), first.rollout.path)
    assert restored.resumed.environment_changed == ("approval_policy",)
    server.script(Reply(text="two"))
    await collect_events(restored, "again")
    fragment = messages(server.requests[1])[-2]["content"]
    assert fragment.startswith("<environment_context>") and "<approval_policy>untrusted</approval_policy>" in fragment
    assert "<cwd>" not in fragment  # only what changed


async def test_interrupted_tool_calls_are_closed_as_aborted(server, tmp_path, monkeypatch):
    config = make_config(server, tmp_path / "repo", monkeypatch)
    first = open_session(config, interactive=False)
    first.start_context(lambda event: None)
    first.record(user("run it"))
    first.record(ItemToolCall("call_9", "shell", '{"command": "sleep 100"}'))  # then the process died
    first.rollout.close()

    restored = restore(open_session(config, interactive=False), first.rollout.path)
    assert restored.resumed.closed_calls == 1
    assert restored.history.items[-1] == ToolOutput("call_9", ABORTED_OUTPUT, success=False)
    assert load_session_file(first.rollout.path).items[-1] == restored.history.items[-1]  # saved too
    notes = restored.resumed.events()
    assert isinstance(notes[0], ev.Notice) and "closed as aborted" in notes[0].text


async def test_session_start_hooks_see_the_resume_source(server, isolated_home, tmp_path, monkeypatch):
    (isolated_home / "config.toml").write_text(
        "[[hooks.SessionStart]]\n"
        """command = '''python3 -c "import json,sys; print(json.load(sys.stdin)['source'])" >> sources.log'''\n"""
    )
    config = make_config(server, tmp_path / "repo", monkeypatch)
    first = open_session(config, interactive=False)
    server.script(Reply(text="one"), Reply(text="two"))
    await collect_events(first, "hi")
    first.rollout.close()
    await collect_events(restore(open_session(config, interactive=False), first.rollout.path), "again")
    assert (tmp_path / "repo" / "sources.log").read_text().split() == ["startup", "resume"]


def test_the_picker_lists_this_directorys_sessions_first(isolated_home, tmp_path):
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    paths = {}
    for name, cwd, when in (("aaaa1111", "/p/here", 1_000), ("bbbb2222", "/p/elsewhere", 2_000)):
        writer_session = isolated_home / "sessions" / "2025" / "01" / "01" / f"000000-x-{name}.jsonl"
        writer_session.parent.mkdir(parents=True, exist_ok=True)
        header = {
            "type": "session",
            "format_version": 1,
            "id": f"x-{name}",
            "cwd": cwd,
            "model": "m",
            "provider": "p",
            "created": "2025-01-01T00:00:00+00:00",
        }
        writer_session.write_text(json.dumps(header) + "\n")
        os.utime(writer_session, (when, when))
        paths[name] = writer_session
    out = io.StringIO()
    chosen = pick_session(isolated_home, Path("/p/here"), stdin=Terminal("nonsense\n2\n"), out=out)
    assert chosen == paths["bbbb2222"]
    listing = out.getvalue().splitlines()
    assert "aaaa1111" in listing[0] and "bbbb2222" in listing[1]


# --- agent exec resume ---------------------------------------------------------------------


def exec_env(server, home: Path) -> dict[str, str]:
    return {**provider_env(server, "openai-chat"), "AGENT_HOME": str(home)}


def test_exec_resume_by_id_and_last_prefers_this_directory(server, isolated_home, tmp_path):
    env = exec_env(server, isolated_home)
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir(), there.mkdir()
    server.script(Reply(text="first answer"), Reply(text="other answer"))
    assert run_agent([*EXEC, "task in here"], cwd=here, env=env).returncode == 0
    assert run_agent([*EXEC, "task over there"], cwd=there, env=env).returncode == 0
    here_file = next(p for p in session_files(isolated_home) if str(here) in p.read_text().splitlines()[0])
    short_id = json.loads(here_file.read_text().splitlines()[0])["id"].rsplit("-", 1)[-1]

    server.script(Reply(text="resumed by id"), Reply(text="resumed last"))
    by_id = run_agent(["exec", "resume", short_id, "what did I ask?"], cwd=there, env=env)
    assert by_id.returncode == 0, by_id.stderr
    assert by_id.stdout == "resumed by id\n"
    contents = [m["content"] for m in messages(server.requests[2])]
    assert "task in here" in contents and contents[-1] == "what did I ask?"
    assert "continuing session" in by_id.stderr

    last = run_agent(["exec", "resume", "--last", "and now?"], cwd=here, env=env)
    assert last.returncode == 0, last.stderr
    assert "resuming the most recent session in this directory" in last.stderr
    contents = [m["content"] for m in messages(server.requests[3])]
    assert "task in here" in contents and "what did I ask?" in contents  # the same session, grown
    assert len(session_files(isolated_home)) == 2


def test_agent_sessions_lists_time_id_size_cwd_and_first_prompt(server, isolated_home, tmp_path):
    env = exec_env(server, isolated_home)
    server.script(Reply(text="ok"))
    assert run_agent([*EXEC, "refactor the parser please"], cwd=tmp_path, env=env).returncode == 0
    listing = run_agent(["sessions"], cwd=tmp_path, env=env)
    assert listing.returncode == 0
    header, row = listing.stdout.splitlines()[:2]
    assert header.split() == ["UPDATED", "ID", "SIZE", "DIRECTORY", "FIRST", "PROMPT"]
    session_id = json.loads(session_files(isolated_home)[0].read_text().splitlines()[0])["id"]
    assert session_id.rsplit("-", 1)[-1] in row and "refactor the parser please" in row and "KB" in row


async def test_sessions_are_listed_and_replayed_as_typed_not_as_expanded(server, isolated_home, tmp_path, monkeypatch):
    from agent_cli.store.replay import replay_events

    config = make_config(server, tmp_path / "repo", monkeypatch)
    (config.cwd / "notes.txt").write_text("remember the milk\n")
    for prompt in ("/review @notes.txt", "summarize @notes.txt"):
        session = open_session(config, interactive=False)
        server.script(Reply(text="done"))
        await collect_events(session, prompt)
        await session.aclose()
    assert "You are reviewing" in json.dumps(server.requests[0].body)  # /review sent its rubric

    listing = run_agent(["sessions"], cwd=tmp_path, env=exec_env(server, isolated_home)).stdout
    rows = listing.splitlines()[1:3]
    assert sorted(row.rsplit("  ", 1)[-1] for row in rows) == ["/review @notes.txt", "summarize @notes.txt"]
    restored = restore(open_session(config, interactive=True), session.rollout.path)
    shown = [event for event in replay_events(restored.history.items) if isinstance(event, ev.UserMessage)]
    assert [(event.typed, "remember the milk" in event.text) for event in shown] == [("summarize @notes.txt", True)]
    await restored.aclose()


def test_a_torn_last_line_is_skipped_with_a_warning(server, isolated_home, tmp_path):
    env = exec_env(server, isolated_home)
    server.script(Reply(text="first answer"))
    assert run_agent([*EXEC, "remember 42"], cwd=tmp_path, env=env).returncode == 0
    path = session_files(isolated_home)[0]
    with path.open("ab") as handle:
        handle.write(b'{"type":"item","item":{"type":"message","role":"assis')
    server.script(Reply(text="still here"))
    result = run_agent(["exec", "resume", "--last", "what number?"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "warning: skipped a torn last line" in result.stderr
    contents = [m["content"] for m in messages(server.requests[1])]
    assert "remember 42" in contents and "first answer" in contents
    assert load_session_file(path).warnings == ()  # the fragment was cut before appending


def write_session(home: Path, header: dict, *lines: str) -> Path:
    path = home / "sessions" / "2025" / "01" / "01" / "000000-20250101T000000-deadbeef.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([json.dumps(header), *lines]) + "\n")
    return path


HEADER = {
    "type": "session",
    "format_version": FORMAT_VERSION,
    "id": "20250101T000000-deadbeef",
    "cwd": "/",
    "model": "test-model",
    "provider": "openai-chat",
    "created": "2025-01-01T00:00:00+00:00",
}


def test_a_newer_format_is_refused_with_exit_2(server, isolated_home, tmp_path):
    write_session(isolated_home, {**HEADER, "format_version": FORMAT_VERSION + 1}, '{"type":"new-kind"}')
    result = run_agent(["exec", "resume", "deadbeef", "hi"], cwd=tmp_path, env=exec_env(server, isolated_home))
    assert result.returncode == 2
    assert "written by a newer agent-cli" in result.stderr and "Upgrade agent-cli" in result.stderr
    assert "Traceback" not in result.stderr and server.requests == []


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"type":"item","item":{"type":"message","role":"user","text":"a"}}', "{oops", "{}"], "line 3 is corrupt"),
        (['{"type":"item","item":{"type":"nonsense"}}'], "line 2 is malformed: unknown item type 'nonsense'"),
    ],
)
def test_a_corrupt_file_is_a_clear_error_not_a_traceback(server, isolated_home, tmp_path, lines, message):
    write_session(isolated_home, HEADER, *lines)
    result = run_agent(["exec", "resume", "--last", "hi"], cwd=tmp_path, env=exec_env(server, isolated_home))
    assert result.returncode == 2
    assert message in result.stderr and "Traceback" not in result.stderr


def test_unknown_ids_and_a_missing_choice_are_usage_errors(server, isolated_home, tmp_path):
    env = exec_env(server, isolated_home)
    unknown = run_agent(["exec", "resume", "nope", "hi"], cwd=tmp_path, env=env)
    assert unknown.returncode == 2 and "no saved session matches 'nope'" in unknown.stderr
    nothing = run_agent(["exec", "resume", "--last", "hi"], cwd=tmp_path, env=env)
    assert nothing.returncode == 2 and "no saved session" in nothing.stderr
    picker = run_agent(["resume"], cwd=tmp_path, env=env)  # stdin is not a terminal here
    assert picker.returncode == 2 and ("needs a terminal" in picker.stderr or "no saved session" in picker.stderr)


# --- kill -9 -------------------------------------------------------------------------------


def test_sigkill_mid_turn_loses_nothing_that_had_completed(server, isolated_home, tmp_path):
    """kill -9 while a tool runs; `agent exec resume --last` sends every completed item."""
    env = agent_process_env(**exec_env(server, isolated_home))
    server.script(
        Reply(text="Starting the long job.", tool_calls=[ToolCall("shell", {"command": "echo step-1-done"})]),
        Reply(
            text="Now the slow part.", tool_calls=[ToolCall("shell", {"command": "sleep 5.0505"}, call_id="call_slow")]
        ),
    )
    log = (tmp_path / "agent.log").open("w")
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *EXEC, "run the long job"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            files = session_files(isolated_home)
            if files and '"call_id":"call_slow"' in files[0].read_text():
                break
            assert proc.poll() is None, (tmp_path / "agent.log").read_text()
            time.sleep(0.05)
        else:
            pytest.fail("the tool call never reached the session file")
        wait_for(lambda: pids_running("sleep", "5.0505"), what="the command to run")  # killed mid-call
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        log.close()
    assert proc.returncode == -signal.SIGKILL

    server.script(Reply(text="Picking up where we left off."))
    result = run_agent(["exec", "resume", "--last", "continue"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Picking up where we left off.\n"
    sent = messages(server.requests[-1])
    assert [m["role"] for m in sent][-6:] == ["user", "assistant", "tool", "assistant", "tool", "user"]
    first_output, slow_output = [m for m in sent if m["role"] == "tool"]
    assert "step-1-done" in first_output["content"]  # completed before the kill: kept
    assert slow_output == {"role": "tool", "tool_call_id": "call_slow", "content": ABORTED_OUTPUT}
    assert sent[-1] == {"role": "user", "content": "continue"}
    assert any(m["role"] == "user" and m["content"] == "run the long job" for m in sent)
    assert "closed as aborted" in result.stderr
