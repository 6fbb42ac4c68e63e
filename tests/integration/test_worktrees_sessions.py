"""Sessions in worktrees: `agent sessions` shows where each ran, resume goes back there (made again
when it was removed), and sessions have names (`agent sessions rename|rm`, resume by name)."""

from __future__ import annotations

import json
import os

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.worktree_helpers import checkout_state, committed_repo

CHAT = ["--provider", "openai-chat", "-m", "m"]


def exec_json(server, repo, *args: str):
    result = run_agent(["exec", *CHAT, "--json", *args], cwd=repo, env=provider_env(server, "chat"))
    assert result.returncode == 0, result.stderr
    return result, [json.loads(line) for line in result.stdout.splitlines()]


def test_resume_goes_back_into_the_worktree_and_sessions_show_it(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    before = checkout_state(repo)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo 1 > work.txt"})]), Reply(text="started"))
    _, lines = exec_json(server, repo, "--worktree", "feat", "start the work")
    thread = lines[0]["thread_id"]
    path = next(line for line in lines if line["type"] == "worktree.kept")["worktree"]["path"]

    listing = run_agent(["sessions", "-n", "0"], cwd=repo)
    row = next(line for line in listing.stdout.splitlines() if "start the work" in line)
    assert "@feat" in row and "repo" in row

    renamed = run_agent(["sessions", "rename", thread, "feature", "work"], cwd=repo)
    assert renamed.returncode == 0 and "is now named 'feature work'" in renamed.stdout
    assert "[feature work] start the work" in run_agent(["sessions"], cwd=repo).stdout

    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "pwd; cat work.txt"})]), Reply(text="continued"))
    result, lines = exec_json(server, repo, "resume", "feature work", "go on")  # by its name, from the checkout
    assert lines[0]["thread_id"] == thread
    assert f"in worktree feat (branch agent/feat): {path}" in result.stderr
    output = server.requests[-1].body["messages"][-1]["content"]
    assert path in output and "1" in output
    assert checkout_state(repo) == before

    deleted = run_agent(["sessions", "rm", "feature work"], cwd=repo)
    assert deleted.returncode == 0, deleted.stderr
    assert "start the work" not in run_agent(["sessions"], cwd=repo).stdout
    assert os.path.isdir(path)  # the worktree is not the session's to delete


def test_resume_of_a_removed_worktree_makes_it_again(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    server.script(Reply(text="looked"))
    result, lines = exec_json(server, repo, "--worktree", "peek", "look")
    assert "removed worktree peek" in result.stderr
    thread = lines[0]["thread_id"]
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "pwd"})]), Reply(text="back"))
    result, lines = exec_json(server, repo, "resume", thread, "again")
    assert "created worktree peek on branch agent/peek" in result.stderr
    assert "/worktrees/repo-" in server.requests[-1].body["messages"][-1]["content"]


def test_sessions_rm_refuses_a_session_in_use(server, tmp_path):
    from agent_cli.store.rollout import RolloutWriter, SessionHeader

    repo = committed_repo(tmp_path / "repo")
    server.script(Reply(text="hi"))
    _, lines = exec_json(server, repo, "hello")
    found = run_agent(["sessions", lines[0]["thread_id"]], cwd=repo).stdout.splitlines()[0]
    writer = RolloutWriter(found, SessionHeader("x", "", "", "", ""))
    writer.continue_file(found)  # this process now holds it, as a running agent would
    try:
        refused = run_agent(["sessions", "rm", lines[0]["thread_id"]], cwd=repo)
        assert refused.returncode == 2 and "in use by another running agent" in refused.stderr
    finally:
        writer.close()
    assert run_agent(["sessions", "rm", lines[0]["thread_id"]], cwd=repo).returncode == 0
