"""`agent exec` with checkpoints: --json events, `agent exec undo`, `agent exec resume --fork`."""

from __future__ import annotations

import json

from agent_cli.store.catalog import list_sessions
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall

FLAGS = ["--provider", "openai-chat", "-m", "m", "-s", "danger-full-access"]


def exec_json(server, root, *args):
    result = run_agent(["exec", *FLAGS, "--json", *args], cwd=root, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    return [json.loads(line) for line in result.stdout.splitlines()]


def test_exec_undo_restores_the_last_turn_of_the_session(server, tmp_path, isolated_home):
    root = git_init(tmp_path / "repo")
    (root / "a.txt").write_text("one\n")
    (root / "tool.sh").write_text("#!/bin/sh\n")
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "echo two > a.txt; rm tool.sh; echo n > new.txt"})]),
        Reply(text="changed"),
    )
    events = exec_json(server, root, "change things")
    items = [event["item"] for event in events if event["type"] == "item.completed"]
    created = next(item for item in items if item["type"] == "checkpoint_created")
    assert created["turn"] == 1 and len(created["commit"]) == 40 and created["files"] == 2

    result = run_agent(["exec", "undo", "--json"], cwd=root)
    assert result.returncode == 0, result.stderr
    outcome = json.loads(result.stdout)
    assert outcome["type"] == "rewound" and sorted(outcome["restored"]) == ["a.txt", "new.txt", "tool.sh"]
    assert "-one\n+two" in result.stderr  # the diff it took back
    assert (root / "a.txt").read_text() == "one\n" and (root / "tool.sh").exists() and not (root / "new.txt").exists()
    again = run_agent(["exec", "undo"], cwd=root)
    assert again.returncode == 1 and "nothing to undo" in again.stderr
    elsewhere = run_agent(["exec", "undo", "--last"], cwd=tmp_path)
    assert elsewhere.returncode == 2 and "no session was started" in elsewhere.stderr


def test_exec_resume_fork_leaves_the_original_untouched(server, tmp_path, isolated_home):
    root = tmp_path / "plain"
    root.mkdir()
    server.script(Reply(text="first answer"))
    exec_json(server, root, "first question")
    [original] = list_sessions(isolated_home)
    before = original.path.read_bytes()
    server.script(Reply(text="second answer"))
    result = run_agent(
        ["exec", *FLAGS, "resume", "--fork", "--last", "second question"],
        cwd=root,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    assert original.path.read_bytes() == before
    sessions = list_sessions(isolated_home)
    assert len(sessions) == 2
    forked = next(s for s in sessions if s.path != original.path)
    text = forked.path.read_text()
    assert "first question" in text and "second question" in text
    assert "first question" in server.requests[-1].raw.decode()
