"""Every hook event, end to end: each fires once at its point with Claude Code's input fields.

The hooks are declared in the repository's ``.claude/settings.json``, Claude Code's shape; each
appends the JSON it got to a log, which is checked against Claude Code's documented input."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.hooks.spec import HOOK_EVENTS
from agent_cli.session import Session
from agent_cli.session.hook_events import end_reason
from tests import session_helpers
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall

COMMON = {"session_id", "transcript_path", "cwd", "hook_event_name", "permission_mode"}
# Claude Code's documented input of each event, beyond the common fields.
CLAUDE_INPUT = {
    "SessionStart": {"source"},
    "UserPromptSubmit": {"prompt"},
    "PreToolUse": {"tool_name", "tool_input", "tool_use_id"},
    "PermissionRequest": {"tool_name", "tool_input", "permission_suggestions"},
    "Notification": {"message", "notification_type"},
    "PostToolUse": {"tool_name", "tool_input", "tool_response", "tool_use_id"},
    "PostToolUseFailure": {"tool_name", "tool_input", "tool_use_id", "error", "is_interrupt"},
    "SubagentStart": {"agent_id", "agent_type"},
    "SubagentStop": {"agent_id", "agent_type", "stop_hook_active", "agent_transcript_path", "last_assistant_message"},
    "Stop": {"stop_hook_active"},
    "PreCompact": {"trigger", "custom_instructions"},
    "SessionEnd": {"reason"},
}
LOGGER = "import json, sys; open(sys.argv[1], 'a').write(json.dumps(json.load(sys.stdin)) + '\\n')"


def logging_settings(repo: Path, log: Path, events=HOOK_EVENTS) -> None:
    script = repo / "log_hook.py"
    script.write_text(LOGGER)
    command = f"{sys.executable} {script} {log}"
    hooks = {event: [{"hooks": [{"type": "command", "command": command}]}] for event in events}
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


def logged(log: Path) -> list[dict]:
    return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


def make_session(server, tmp_path: Path, monkeypatch, log: Path) -> Session:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    logging_settings(repo, log)
    return session_helpers.make_session(
        server,
        repo,
        monkeypatch,
        'sandbox_mode="danger-full-access"',
        'approval_policy="untrusted"',
        "memory=false",
        model="m",
        interactive=True,
    )


async def test_every_event_fires_once_at_its_point_with_claude_codes_fields(server, tmp_path, monkeypatch):
    log = tmp_path / "hooks.jsonl"
    session = make_session(server, tmp_path, monkeypatch, log)
    assert set(CLAUDE_INPUT) == set(HOOK_EVENTS)
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "seq 1 2000; echo boom; exit 3"})]),  # enough to compact
        Reply(tool_calls=[ToolCall("task", {"agent": "explore", "description": "look", "prompt": "look around"})]),
        Reply(text="the child looked"),
        Reply(text="all done; " + "what was found, in detail. " * 150),  # long enough for /compact to pay off
        Reply(text="a summary of the work"),  # /compact
    )
    asked = []
    async for event in submit(session, "run it"):
        if isinstance(event, ev.ApprovalRequest):
            asked.append(event)
            event.future.set_result(ev.ApprovalDecision("approve"))
    assert len(asked) == 1
    async for _ in submit(session, "/compact"):
        pass
    end_reason(session.hooks, "prompt_input_exit")
    await session.aclose()

    entries = logged(log)
    order = [entry["hook_event_name"] for entry in entries]
    # Notification runs beside the question (it never holds it up), so it may end after what follows
    assert order.index("Notification") > order.index("PermissionRequest")
    assert [name for name in order if name != "Notification"] == [
        "SessionStart",
        "UserPromptSubmit",
        "PreToolUse",
        "PermissionRequest",
        "PostToolUse",
        "PostToolUseFailure",
        "PreToolUse",  # the task call
        "SubagentStart",
        "SubagentStop",
        "PostToolUse",
        "Stop",
        "PreCompact",
        "SessionStart",  # after the compaction
        "SessionEnd",
    ], order
    for entry in entries:
        event = entry["hook_event_name"]
        missing = (COMMON | CLAUDE_INPUT[event]) - set(entry)
        assert not missing, f"{event} lacks {missing}"
        assert entry["session_id"] == session.id
    by_event = {}
    for entry in entries:
        by_event.setdefault(entry["hook_event_name"], entry)
    assert by_event["PreToolUse"]["tool_name"] == "Bash"  # Claude's vocabulary in Claude's files
    assert by_event["PermissionRequest"]["tool_input"]["command"] == "seq 1 2000; echo boom; exit 3"
    assert by_event["Notification"]["notification_type"] == "permission_prompt"
    assert "Bash" in by_event["Notification"]["message"] or "shell" in by_event["Notification"]["message"]
    assert by_event["PostToolUseFailure"]["is_interrupt"] is False
    assert "boom" in by_event["PostToolUseFailure"]["error"]
    assert by_event["SubagentStart"]["agent_type"] == "explore"
    assert by_event["SubagentStop"]["agent_id"] == by_event["SubagentStart"]["agent_id"]
    assert by_event["PreCompact"]["trigger"] == "manual"
    assert [e["source"] for e in entries if e["hook_event_name"] == "SessionStart"] == ["startup", "compact"]
    assert by_event["SessionEnd"]["reason"] == "prompt_input_exit"


async def test_a_permission_request_hook_answers_for_the_user(server, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    allow = {"hookSpecificOutput": {"hookEventName": "PermissionRequest", "decision": {"behavior": "allow"}}}
    deny = {"hookSpecificOutput": {"decision": {"behavior": "deny", "message": "not on Fridays"}}}
    script = repo / "answer.py"
    script.write_text(
        "import json, sys\n"
        "command = json.load(sys.stdin)['tool_input']['command']\n"
        f"print(json.dumps({allow!r} if 'touch' in command else {deny!r}))\n"
    )
    hooks = {"PermissionRequest": [{"matcher": "Bash", "hooks": [{"type": "command", "command": f"python3 {script}"}]}]}
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))
    session = session_helpers.make_session(
        server, repo, monkeypatch, 'sandbox_mode="danger-full-access"', 'approval_policy="untrusted"', interactive=True
    )
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch made.txt"}), ToolCall("shell", {"command": "rm x"})]),
        Reply(text="done"),
    )
    events = [event async for event in submit(session, "go")]
    await session.aclose()
    assert not [event for event in events if isinstance(event, ev.ApprovalRequest)]  # nobody was asked
    assert (repo / "made.txt").exists()
    ends = [event for event in events if isinstance(event, ev.ToolCallEnd)]
    assert ends[0].success and not ends[1].success
    assert "a PermissionRequest hook denied it: not on Fridays" in ends[1].output


async def test_a_session_closed_before_its_first_prompt_runs_neither_start_nor_end(server, tmp_path, monkeypatch):
    log = tmp_path / "hooks.jsonl"
    repo = tmp_path / "repo"
    repo.mkdir()
    logging_settings(repo, log, ["SessionStart", "SessionEnd"])
    session = session_helpers.make_session(server, repo, monkeypatch)
    await session.aclose()
    assert logged(log) == []


async def test_session_end_fires_once_when_exec_like_sessions_close(server, tmp_path, monkeypatch):
    log = tmp_path / "hooks.jsonl"
    repo = tmp_path / "repo"
    repo.mkdir()
    logging_settings(repo, log, ["SessionEnd"])
    session = session_helpers.make_session(server, repo, monkeypatch)
    server.script(Reply(text="hi"))
    async for _ in submit(session, "hello"):
        pass
    await session.aclose()
    await session.aclose()  # a second close runs nothing again
    assert [(e["hook_event_name"], e["reason"]) for e in logged(log)] == [("SessionEnd", "other")]


def test_agent_exec_ends_with_session_end_and_runs_notify(server, isolated_home, tmp_path):
    """A real `agent exec`: the user's ~/.claude/settings.json hook hears SessionEnd (reason other)
    once the run ends, and Codex's notify program gets the turn's JSON; neither outlives the run."""
    home = tmp_path / "home"
    home.mkdir()
    log, out = tmp_path / "hooks.jsonl", tmp_path / "notify.json"
    logging_settings(home, log, ["SessionEnd", "Stop"])  # writes home/.claude/settings.json
    notify = tmp_path / "notify.py"
    notify.write_text(f"import sys, time\ntime.sleep(0.2)\nopen({str(out)!r}, 'w').write(sys.argv[-1])\n")
    (isolated_home / "config.toml").write_text(f'notify = ["{sys.executable}", "{notify}"]\n')
    repo = tmp_path / "repo"
    repo.mkdir()
    server.script(Reply(text="fine"))
    env = {**provider_env(server, "openai-chat"), "AGENT_HOME": str(isolated_home), "HOME": str(home)}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "go"], cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert [(e["hook_event_name"], e.get("reason")) for e in logged(log)] == [("Stop", None), ("SessionEnd", "other")]
    sent = json.loads(out.read_text())  # written before exec returned: the session waited for it
    assert sent["type"] == "agent-turn-complete" and sent["last-assistant-message"] == "fine"
    assert sent["input-messages"] == ["go"] and sent["cwd"] == str(repo)


async def test_subagent_start_context_reaches_the_subagent_only(server, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    reply = {"hookSpecificOutput": {"hookEventName": "SubagentStart", "additionalContext": "CHILD-RULE-42"}}
    hook = {"type": "command", "command": f"echo '{json.dumps(reply)}'"}
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps({"hooks": {"SubagentStart": [{"matcher": "explore", "hooks": [hook]}]}})
    )
    session = session_helpers.make_session(
        server, repo, monkeypatch, 'sandbox_mode="danger-full-access"', "memory=false"
    )
    server.script(
        Reply(tool_calls=[ToolCall("task", {"agent": "explore", "description": "look", "prompt": "look around"})]),
        Reply(text="looked"),
        Reply(text="done"),
    )
    async for _ in submit(session, "go"):
        pass
    await session.aclose()
    parent_first, child_first, parent_second = (json.dumps(r.body["messages"]) for r in server.requests)
    assert "CHILD-RULE-42" in child_first
    assert "CHILD-RULE-42" not in parent_first and "CHILD-RULE-42" not in parent_second


def test_disable_all_hooks_turns_settings_hooks_off(tmp_path, monkeypatch):
    from agent_cli.plugins.claude_hooks import settings_hooks

    monkeypatch.setenv("HOME", str(tmp_path))
    repo = tmp_path / "repo"
    repo.mkdir()
    logging_settings(tmp_path, tmp_path / "log", ["Stop"])  # the user's
    logging_settings(repo, tmp_path / "log", ["SessionEnd"])  # the project's
    assert [spec.event for spec in settings_hooks(repo, trusted=True)[0]] == ["Stop", "SessionEnd"]
    assert [spec.event for spec in settings_hooks(repo, trusted=False)[0]] == ["Stop"]
    (repo / ".claude" / "settings.local.json").write_text('{"disableAllHooks": true}')
    assert settings_hooks(repo, trusted=True) == ([], [])
