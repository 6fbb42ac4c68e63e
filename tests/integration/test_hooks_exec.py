"""Hooks inside real turns: a real Session, the real OpenAI SDK and the fake server over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

from agent_cli import events as ev
from agent_cli.store.catalog import list_sessions
from agent_cli.store.rollout import load_session_file
from tests import session_helpers
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events


def hook(event: str, command: str, matcher: str | None = None) -> str:
    text = f"[[hooks.{event}]]\ncommand = '''{command}'''\n"
    return text + (f"matcher = '{matcher}'\n" if matcher else "")


def make_session(server, home: Path, tmp_path: Path, monkeypatch, config_toml: str, *overrides: str, interactive=False):
    (home / "config.toml").write_text(config_toml)
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    return session_helpers.make_session(server, repo, monkeypatch, *overrides, interactive=interactive)


def messages(request) -> list[dict]:
    return request.body["messages"]


def tool_message(request) -> str:
    return next(m["content"] for m in messages(request) if m["role"] == "tool")


def user_texts(request) -> list[str]:
    return [
        m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
        for m in messages(request)
        if m["role"] == "user"
    ]


def of_type(events, kind):
    return [e for e in events if isinstance(e, kind)]


SHELL_TOUCH = ToolCall("shell", {"command": "touch made-it"})


# --- PreToolUse ----------------------------------------------------------------------------


async def test_pre_tool_use_exit_2_stops_the_call_and_the_model_reads_stderr(
    server, isolated_home, tmp_path, monkeypatch
):
    session = make_session(
        server,
        isolated_home,
        tmp_path,
        monkeypatch,
        hook("PreToolUse", "echo 'touching files is not allowed' >&2; exit 2", "shell"),
    )
    server.script(Reply(tool_calls=[SHELL_TOUCH]), Reply(text="understood"))
    events = await collect_events(session, "make a file")
    assert not (tmp_path / "repo" / "made-it").exists()
    output = tool_message(server.requests[1])
    assert "shell was not run: a PreToolUse hook blocked it." in output
    assert "touching files is not allowed" in output
    assert of_type(events, ev.ToolCallEnd)[0].success is False
    assert of_type(events, ev.TurnComplete)[0].last_message == "understood"


async def test_pre_tool_use_json_deny_gives_its_reason_to_the_model(server, isolated_home, tmp_path, monkeypatch):
    reply = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "use the build tool"}}
    session = make_session(
        server, isolated_home, tmp_path, monkeypatch, hook("PreToolUse", f"echo '{json.dumps(reply)}'")
    )
    server.script(Reply(tool_calls=[SHELL_TOUCH]), Reply(text="ok"))
    await collect_events(session, "go")
    assert not (tmp_path / "repo" / "made-it").exists()
    assert "use the build tool" in tool_message(server.requests[1])


async def test_pre_tool_use_allow_skips_the_approval_question(server, isolated_home, tmp_path, monkeypatch):
    allow = json.dumps({"hookSpecificOutput": {"permissionDecision": "allow"}})
    session = make_session(
        server,
        isolated_home,
        tmp_path,
        monkeypatch,
        hook("PreToolUse", f"echo '{allow}'"),
        'approval_policy="untrusted"',
        interactive=True,
    )
    server.script(Reply(tool_calls=[SHELL_TOUCH]), Reply(text="made"))
    events = await collect_events(session, "go")
    assert of_type(events, ev.ApprovalRequest) == []  # untrusted would have asked about `touch`
    assert (tmp_path / "repo" / "made-it").exists()


async def test_pre_tool_use_ask_forces_the_question(server, isolated_home, tmp_path, monkeypatch):
    ask = json.dumps({"hookSpecificOutput": {"permissionDecision": "ask"}})
    session = make_session(
        server,
        isolated_home,
        tmp_path,
        monkeypatch,
        hook("PreToolUse", f"echo '{ask}'"),
        'approval_policy="never"',
        interactive=True,
    )
    server.script(Reply(tool_calls=[SHELL_TOUCH]), Reply(text="asked"))
    events = await collect_events(session, "go", answer="approve")
    requests = of_type(events, ev.ApprovalRequest)
    assert len(requests) == 1 and "PreToolUse hook" in (requests[0].reason or "")
    assert (tmp_path / "repo" / "made-it").exists()  # approved, so it ran


async def test_pre_tool_use_ask_in_a_session_that_cannot_ask_denies(server, isolated_home, tmp_path, monkeypatch):
    ask = json.dumps({"hookSpecificOutput": {"permissionDecision": "ask"}})
    session = make_session(server, isolated_home, tmp_path, monkeypatch, hook("PreToolUse", f"echo '{ask}'"))
    server.script(Reply(tool_calls=[SHELL_TOUCH]), Reply(text="denied"))
    await collect_events(session, "go")
    assert not (tmp_path / "repo" / "made-it").exists()
    assert "cannot ask" in tool_message(server.requests[1])


# --- PostToolUse ---------------------------------------------------------------------------


async def test_post_tool_use_sees_the_response_and_can_give_feedback_and_context(
    server, isolated_home, tmp_path, monkeypatch
):
    reply = {
        "decision": "block",
        "reason": "lint failed: fix it",
        "hookSpecificOutput": {"additionalContext": "the linter is ruff"},
    }
    command = f"cat > post.json; echo '{json.dumps(reply)}'"
    session = make_session(server, isolated_home, tmp_path, monkeypatch, hook("PostToolUse", command, "shell"))
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo produced"})]), Reply(text="fixed"))
    await collect_events(session, "go")
    payload = json.loads((tmp_path / "repo" / "post.json").read_text())
    assert payload["hook_event_name"] == "PostToolUse" and payload["tool_name"] == "shell"
    assert payload["tool_input"] == {"command": "echo produced"}
    assert "produced" in payload["tool_response"]["output"] and payload["tool_response"]["exit_code"] == 0
    second = server.requests[1]
    assert "PostToolUse hook feedback: lint failed: fix it" in tool_message(second)
    roles = [m["role"] for m in messages(second)]
    context_index = next(i for i, m in enumerate(messages(second)) if "the linter is ruff" in str(m["content"]))
    assert roles[context_index] == "user" and context_index > roles.index("tool")  # after the output, not between
    assert messages(second)[context_index]["content"].startswith('<hook_context event="PostToolUse">')


# --- UserPromptSubmit and SessionStart -----------------------------------------------------


async def test_user_prompt_submit_exit_2_drops_the_prompt_and_leaves_no_session_file(
    server, isolated_home, tmp_path, monkeypatch
):
    session = make_session(
        server,
        isolated_home,
        tmp_path,
        monkeypatch,
        hook("UserPromptSubmit", "grep -q hunter2 && { echo 'no secrets in prompts' >&2; exit 2; }; exit 0"),
    )
    events = await collect_events(session, "my password is hunter2")
    assert server.requests == []  # nothing was sent
    assert any("no secrets in prompts" in w.message for w in of_type(events, ev.Warning))
    assert of_type(events, ev.TurnAborted)
    assert all("hunter2" not in str(item) for item in session.history.items)
    assert list_sessions(isolated_home) == [] and not session.rollout.path.exists()

    server.script(Reply(text="ok"))
    await collect_events(session, "what changed today?")  # the file starts with the prompt that is sent
    saved = load_session_file(session.rollout.path).items
    assert saved == tuple(session.history.items) and "hunter2" not in session.rollout.path.read_text()
    assert [s.first_prompt for s in list_sessions(isolated_home)] == ["what changed today?"]
    await session.aclose()


async def test_user_prompt_submit_context_and_system_message(server, isolated_home, tmp_path, monkeypatch):
    reply = {"systemMessage": "prompt checked", "hookSpecificOutput": {"additionalContext": "ticket ABC-12"}}
    session = make_session(
        server,
        isolated_home,
        tmp_path,
        monkeypatch,
        hook("UserPromptSubmit", f"cat > prompt.json; echo '{json.dumps(reply)}'"),
    )
    server.script(Reply(text="ok"))
    events = await collect_events(session, "fix the bug")
    assert json.loads((tmp_path / "repo" / "prompt.json").read_text())["prompt"] == "fix the bug"
    assert ev.Notice("prompt checked", title="UserPromptSubmit hook") in events
    texts = user_texts(server.requests[0])
    assert texts[-2] == "fix the bug" and "ticket ABC-12" in texts[-1]


async def test_session_start_runs_once_and_adds_context_before_the_first_prompt(
    server, isolated_home, tmp_path, monkeypatch
):
    command = (
        """python3 -c "import json,sys; print(json.load(sys.stdin)['source'])" >> starts.log; echo 'repo uses tabs'"""
    )
    session = make_session(server, isolated_home, tmp_path, monkeypatch, hook("SessionStart", command))
    server.script(Reply(text="one"), Reply(text="two"))
    await collect_events(session, "first")
    await collect_events(session, "second")
    assert (tmp_path / "repo" / "starts.log").read_text().split() == ["startup"]
    texts = user_texts(server.requests[0])
    context = next(i for i, t in enumerate(texts) if "repo uses tabs" in t)
    assert context < texts.index("first")


# --- Stop ----------------------------------------------------------------------------------


async def test_stop_exit_2_keeps_the_agent_working_with_the_reason(server, isolated_home, tmp_path, monkeypatch):
    command = "if [ -f stopped-once ]; then exit 0; fi; touch stopped-once; echo 'run the tests first' >&2; exit 2"
    session = make_session(server, isolated_home, tmp_path, monkeypatch, hook("Stop", command))
    server.script(Reply(text="done"), Reply(text="tests pass now"))
    events = await collect_events(session, "work")
    assert len(server.requests) == 2
    assert any("run the tests first" in t for t in user_texts(server.requests[1]))
    assert of_type(events, ev.TurnComplete)[0].last_message == "tests pass now"
    assert any("keep working" in n.text for n in of_type(events, ev.Notice))


async def test_a_stop_hook_that_always_blocks_is_bounded(server, isolated_home, tmp_path, monkeypatch):
    command = "cat >> stop-payloads.jsonl; echo >> stop-payloads.jsonl; echo 'never done' >&2; exit 2"
    session = make_session(server, isolated_home, tmp_path, monkeypatch, hook("Stop", command))
    server.script(*[Reply(text=f"attempt {n}") for n in range(4)])
    events = await collect_events(session, "work")
    assert len(server.requests) == 4  # the first answer, then three continuations
    assert any("3 times in a row" in w.message for w in of_type(events, ev.Warning))
    assert of_type(events, ev.TurnComplete)[0].last_message == "attempt 3"
    payloads = [
        json.loads(line) for line in (tmp_path / "repo" / "stop-payloads.jsonl").read_text().split("\n") if line
    ]
    assert [p["stop_hook_active"] for p in payloads] == [False, True, True, True]
    assert payloads[0]["last_assistant_message"] == "attempt 0"


# --- through `agent exec` ------------------------------------------------------------------


def test_hooks_from_config_toml_under_agent_exec(server, isolated_home, tmp_path):
    block_touch = "if grep -q touch; then echo 'blocked by policy' >&2; exit 2; fi"
    config = (
        hook("PreToolUse", block_touch, "shell")
        + hook("UserPromptSubmit", """echo '{"systemMessage": "hello from the hook"}'""")
        + hook("PostToolUse", "exit 7")
    )
    (isolated_home / "config.toml").write_text(config)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo ran"}), SHELL_TOUCH]), Reply(text="fine"))
    env = {**provider_env(server, "openai-chat"), "AGENT_HOME": str(isolated_home)}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "go"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "fine\n"
    assert "hello from the hook" in result.stderr
    assert "PostToolUse hook `exit 7` failed with exit code 7" in result.stderr  # shown, not fatal
    outputs = [m["content"] for m in messages(server.requests[1]) if m["role"] == "tool"]
    assert "ran" in outputs[0] and "blocked by policy" in outputs[1]
    assert not (tmp_path / "made-it").exists()


def test_a_bad_hooks_table_stops_agent_exec_with_exit_2(server, isolated_home, tmp_path):
    (isolated_home / "config.toml").write_text("[[hooks.PreToolUse]]\ncommand = 'x'\ntimeout = 'soon'\n")
    env = {**provider_env(server, "openai-chat"), "AGENT_HOME": str(isolated_home)}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "go"], cwd=tmp_path, env=env)
    assert result.returncode == 2
    assert "config.toml: `hooks.PreToolUse[0].timeout` must be a positive number" in result.stderr
    assert "Traceback" not in result.stderr


# --- PreCompact and SessionStart after a compaction ----------------------------------------


async def test_compaction_runs_pre_compact_then_session_start_with_source_compact(
    server, isolated_home, tmp_path, monkeypatch
):
    log_field = """python3 -c "import json,sys; p=json.load(sys.stdin); print(p['hook_event_name'], p.get('trigger') or p.get('source'))" >> hooks.log"""
    config = hook("PreCompact", log_field) + hook("SessionStart", log_field, "compact")  # matcher on the source
    session = make_session(server, isolated_home, tmp_path, monkeypatch, config)
    server.script(Reply(text="long answer " * 800), Reply(text="the summary"))
    await collect_events(session, "explain everything")
    events = [event async for event in session.compact("keep the API notes")]
    finished = of_type(events, ev.CompactionFinished)
    assert finished and finished[0].applied
    assert (tmp_path / "repo" / "hooks.log").read_text().splitlines() == ["PreCompact manual", "SessionStart compact"]
    # The session file keeps the old lines and records the replacement.
    saved = load_session_file(session.rollout.path)
    assert saved.items == tuple(session.history.items)
    assert (
        '"type":"compaction"' in session.rollout.path.read_text() and "long answer" in session.rollout.path.read_text()
    )
