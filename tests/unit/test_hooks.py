"""Hooks: config checks, and real hook processes run through ``run_hooks`` (no model involved)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.config import ConfigError, load_config
from agent_cli.hooks.spec import HookConfigError, HookSpec, parse_hooks
from agent_cli.runtime import open_session
from agent_cli.session.hooks import run_hooks
from agent_cli.session.session import Session
from tests.processes import gone


def make_session(home: Path, tmp_path: Path, config_toml: str) -> Session:
    (home / "config.toml").write_text(config_toml)
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    return open_session(load_config(repo, ['model_provider="openai-chat"', 'model="test-model"']), interactive=False)


def hook(event: str, command: str, matcher: str | None = None, timeout: float | None = None) -> str:
    lines = [f"[[hooks.{event}]]", f"command = '''{command}'''"]
    if matcher is not None:
        lines.append(f"matcher = '{matcher}'")
    if timeout is not None:
        lines.append(f"timeout = {timeout}")
    return "\n".join(lines) + "\n"


async def run(session: Session, event: str, **fields):
    events: list[ev.Event] = []
    outcome = await run_hooks(session.turn_context(), session.state, session.services, event, events.append, **fields)
    return outcome, events


# --- config --------------------------------------------------------------------------------


def test_flat_nested_and_single_table_shapes_parse():
    table = {
        "PreToolUse": [
            {"matcher": "shell", "command": "a", "timeout": 5},
            {"matcher": "apply_patch", "hooks": [{"type": "command", "command": "b"}, {"command": "c", "timeout": 2}]},
        ],
        "Stop": {"command": "d"},
    }
    hooks = parse_hooks(table, "config.toml")
    assert hooks["PreToolUse"] == (
        HookSpec("PreToolUse", "a", "shell", 5.0),
        HookSpec("PreToolUse", "b", "apply_patch", 60.0),
        HookSpec("PreToolUse", "c", "apply_patch", 2.0),
    )
    assert hooks["Stop"] == (HookSpec("Stop", "d", None, 60.0),)


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"PreToolUse": "x"}, "`hooks.PreToolUse` must be an array of tables"),
        ({"OnSave": []}, "`hooks.OnSave` is not a hook event"),
        ({"Stop": [{"matcher": "x"}]}, "`hooks.Stop[0].command` must be a non-empty string"),
        ({"Stop": [{"command": "x", "timeout": 0}]}, "`hooks.Stop[0].timeout` must be a positive number"),
        ({"Stop": [{"command": "x", "timeout": True}]}, "timeout` must be a positive number"),
        ({"Stop": [{"command": "x", "comand": "y"}]}, "`hooks.Stop[0].comand` is not a hook setting"),
        ({"PreToolUse": [{"command": "x", "matcher": "[a"}]}, "matcher` is not a valid regular expression"),
        (
            {"PreToolUse": [{"hooks": [{"command": "x", "type": "agent"}]}]},
            "type` must be one of command, http, prompt",
        ),
        ({"Stop": [{"type": "http", "url": "file:///etc/passwd"}]}, "url` must be an http:// or https:// URL"),
        ({"Stop": [{"type": "prompt", "command": "x"}]}, "command` is not a setting of a prompt hook"),
    ],
)
def test_bad_tables_name_the_key(table, message):
    with pytest.raises(HookConfigError, match=message.replace("[", r"\[").replace("(", r"\(")) as info:
        parse_hooks(table, "/home/me/.agent/config.toml")
    assert str(info.value).startswith("/home/me/.agent/config.toml: ")


def test_a_bad_hook_in_a_config_file_is_a_config_error_naming_the_file(isolated_home, tmp_path):
    (isolated_home / "config.toml").write_text("[[hooks.PreToolUse]]\nmatcher = 'shell'\n")
    with pytest.raises(ConfigError, match=r"config\.toml: `hooks\.PreToolUse\[0\]\.command`"):
        load_config(tmp_path)


def test_matchers_match_the_whole_tool_name():
    assert HookSpec("PreToolUse", "x", "shell").matches("shell")
    assert not HookSpec("PreToolUse", "x", "shell").matches("shell_extra")
    assert HookSpec("PreToolUse", "x", "read_.*|grep").matches("read_file")
    assert HookSpec("PreToolUse", "x", "*").matches("anything")
    assert HookSpec("PreToolUse", "x", None).matches("anything")


# --- running -------------------------------------------------------------------------------


async def test_the_hook_gets_the_payload_on_stdin_and_runs_in_the_session_cwd(isolated_home, tmp_path):
    session = make_session(isolated_home, tmp_path, hook("PreToolUse", "cat > payload.json; pwd > cwd.txt", "shell"))
    outcome, events = await run(session, "PreToolUse", tool_name="shell", tool_input={"command": "ls"})
    repo = tmp_path / "repo"
    payload = json.loads((repo / "payload.json").read_text())
    assert payload == {
        "session_id": session.id,
        "transcript_path": str(session.rollout.path),
        "cwd": str(repo),
        "hook_event_name": "PreToolUse",
        "permission_mode": "default",
        "tool_name": "shell",
        "tool_input": {"command": "ls"},
    }
    assert (repo / "cwd.txt").read_text().strip() == str(repo)
    assert not outcome.blocked and events == []


async def test_only_matching_hooks_run(isolated_home, tmp_path):
    config = hook("PreToolUse", "touch shell-hook", "shell") + hook("PreToolUse", "touch patch-hook", "apply_patch")
    session = make_session(isolated_home, tmp_path, config)
    await run(session, "PreToolUse", tool_name="apply_patch", tool_input={})
    repo = tmp_path / "repo"
    assert (repo / "patch-hook").exists() and not (repo / "shell-hook").exists()


async def test_exit_2_blocks_with_stderr_as_the_reason(isolated_home, tmp_path):
    session = make_session(isolated_home, tmp_path, hook("PreToolUse", "echo 'no rm here' >&2; exit 2"))
    outcome, events = await run(session, "PreToolUse", tool_name="shell", tool_input={})
    assert outcome.blocked and outcome.reason == "no rm here"
    assert events == []


async def test_other_exit_codes_are_errors_shown_to_the_user_and_do_not_block(isolated_home, tmp_path):
    session = make_session(isolated_home, tmp_path, hook("PreToolUse", "echo broken >&2; exit 1"))
    outcome, events = await run(session, "PreToolUse", tool_name="shell", tool_input={})
    assert not outcome.blocked
    assert len(events) == 1 and isinstance(events[0], ev.Warning)
    assert "failed with exit code 1: broken" in events[0].message


async def test_a_hook_past_its_timeout_is_killed_with_its_children(isolated_home, tmp_path):
    command = "sleep 30 & echo $! > child.pid; wait"
    session = make_session(isolated_home, tmp_path, hook("Stop", command, timeout=0.5))
    started = time.monotonic()
    outcome, events = await run(session, "Stop")
    assert time.monotonic() - started < 5
    assert not outcome.blocked
    assert [type(e) for e in events] == [ev.Warning] and "timed out after 0.5s" in events[0].message
    pid = int((tmp_path / "repo" / "child.pid").read_text())
    assert await gone(pid, within=5)


async def test_invalid_json_is_an_error_shown_to_the_user(isolated_home, tmp_path):
    session = make_session(isolated_home, tmp_path, hook("PreToolUse", "echo '{\"decision\": '"))
    outcome, events = await run(session, "PreToolUse", tool_name="shell", tool_input={})
    assert not outcome.blocked
    assert len(events) == 1 and "printed invalid JSON" in events[0].message


async def test_json_on_exit_0(isolated_home, tmp_path):
    reply = {
        "systemMessage": "checked by policy bot",
        "decision": "block",
        "reason": "tests must pass first",
        "hookSpecificOutput": {"additionalContext": "branch is main"},
    }
    session = make_session(isolated_home, tmp_path, hook("Stop", f"echo '{json.dumps(reply)}'"))
    outcome, events = await run(session, "Stop")
    assert outcome.blocked and outcome.reason == "tests must pass first"
    assert outcome.context == ["branch is main"]
    assert events == [ev.Notice("checked by policy bot", title="Stop hook")]


@pytest.mark.parametrize(
    ("decisions", "permission", "blocked"),
    [
        (["allow"], "allow", False),
        (["ask"], "ask", False),
        (["deny"], "deny", True),
        (["allow", "ask"], "ask", False),  # the strictest of all hooks wins
        (["ask", "deny", "allow"], "deny", True),
    ],
)
async def test_permission_decisions(isolated_home, tmp_path, decisions, permission, blocked):
    config = "".join(
        hook(
            "PreToolUse",
            "echo '"
            + json.dumps(
                {"hookSpecificOutput": {"permissionDecision": decision, "permissionDecisionReason": f"said {decision}"}}
            )
            + "'",
        )
        for decision in decisions
    )
    session = make_session(isolated_home, tmp_path, config)
    outcome, events = await run(session, "PreToolUse", tool_name="shell", tool_input={})
    assert (outcome.permission, outcome.blocked) == (permission, blocked)
    if blocked:
        assert outcome.reason == "said deny"
    assert events == []


async def test_an_unknown_permission_decision_is_reported(isolated_home, tmp_path):
    session = make_session(isolated_home, tmp_path, hook("PreToolUse", """echo '{"permissionDecision": "maybe"}'"""))
    outcome, events = await run(session, "PreToolUse", tool_name="shell", tool_input={})
    assert outcome.permission is None and "unknown permissionDecision 'maybe'" in events[0].message


async def test_plain_stdout_is_context_for_prompt_hooks_only(isolated_home, tmp_path):
    config = hook("UserPromptSubmit", "echo 'ticket ABC-1 is open'") + hook("PreToolUse", "echo 'just chatter'")
    session = make_session(isolated_home, tmp_path, config)
    prompt_outcome, _ = await run(session, "UserPromptSubmit", prompt="hi")
    tool_outcome, _ = await run(session, "PreToolUse", tool_name="shell", tool_input={})
    assert prompt_outcome.context == ["ticket ABC-1 is open"]
    assert tool_outcome.context == [] and not tool_outcome.blocked


@pytest.mark.serial  # timed: a bound of 1.5 s
async def test_hooks_of_one_event_run_concurrently(isolated_home, tmp_path):
    config = "".join(hook("Stop", "sleep 0.5") for _ in range(4))
    session = make_session(isolated_home, tmp_path, config)
    started = time.monotonic()
    outcome, _ = await run(session, "Stop")
    assert time.monotonic() - started < 1.5
    assert len(outcome.runs) == 4 and all(r.exit_code == 0 for r in outcome.runs)


async def test_a_session_without_hooks_starts_nothing(isolated_home, tmp_path):
    session = make_session(isolated_home, tmp_path, "")
    outcome, events = await run(session, "PreToolUse", tool_name="shell", tool_input={})
    assert outcome.runs == [] and events == []


def test_http_and_prompt_hooks_parse_from_config_toml(isolated_home, tmp_path):
    (isolated_home / "config.toml").write_text(
        "[[hooks.PreToolUse]]\n"
        "matcher = 'shell'\n"
        "hooks = [{ type = 'http', url = 'http://127.0.0.1:8700/p', headers = { A = '$T' }, allowedEnvVars = ['T'] }]\n"
        "[[hooks.Stop]]\n"
        "hooks = [{ type = 'prompt', prompt = 'done? $ARGUMENTS', model = 'small', timeout = 5 }]\n"
    )
    repo = tmp_path / "repo"
    repo.mkdir()
    table = parse_hooks(load_config(repo).raw["hooks"])
    (http,) = table["PreToolUse"]
    assert (http.kind, http.command, http.matcher, http.headers, http.allowed_env_vars, http.timeout) == (
        "http",
        "http://127.0.0.1:8700/p",
        "shell",
        (("A", "$T"),),
        ("T",),
        30.0,
    )
    (prompt,) = table["Stop"]
    assert (prompt.kind, prompt.command, prompt.model, prompt.timeout) == ("prompt", "done? $ARGUMENTS", "small", 5.0)
