"""An agent file with `isolation: worktree` (Claude Code's front matter): the subagent works in a
worktree of its own, and the answer the parent's model reads names the branch with its changes."""

from __future__ import annotations

import json
import os
import re

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.worktree_helpers import agent_branches, checkout_state, committed_repo, git

AGENT_FILE = """---
name: builder
description: Builds things in a checkout of its own.
isolation: worktree
tools: Bash
---
Build what you are asked.
"""


def task(prompt: str) -> Reply:
    return Reply(tool_calls=[ToolCall("task", {"agent": "builder", "description": "build", "prompt": prompt})])


def test_a_subagent_with_isolation_worktree_works_on_a_branch_of_its_own(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    (repo / ".agent" / "agents").mkdir(parents=True)
    (repo / ".agent" / "agents" / "builder.md").write_text(AGENT_FILE)
    before = checkout_state(repo)
    server.script(
        task("make child.txt"),
        Reply(tool_calls=[ToolCall("shell", {"command": "echo child > child.txt && pwd"})]),
        Reply(text="made child.txt"),
        task("look around"),  # a second child that changes nothing
        Reply(text="nothing to change"),
        Reply(text="fine"),
    )
    env = provider_env(server, "chat")
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "m", "--json", "build"], cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert checkout_state(repo) == before and not (repo / "child.txt").exists()

    pwd = server.requests[2].body["messages"][-1]["content"]
    assert "/worktrees/repo-" in pwd and "/builder-" in pwd  # the child's commands ran in its worktree
    answer = server.requests[3].body["messages"][-1]["content"]
    assert "made child.txt" in answer
    match = re.search(r"on branch (agent/builder-[0-9a-f]+), in the worktree (\S+)\.", answer)
    assert match, answer
    branch, path = match.groups()
    assert "1 uncommitted change" in answer
    assert open(os.path.join(path, "child.txt")).read() == "child\n"
    assert branch in agent_branches(repo)
    assert git(path, "symbolic-ref", "--short", "HEAD") == branch

    shown = [json.loads(line) for line in result.stdout.splitlines()]  # the user sees it too
    assert any(branch in json.dumps(line) for line in shown if line.get("item", {}).get("type") != "subagent")

    second = server.requests[5].body["messages"][-1]["content"]  # nothing changed: nothing kept
    assert "It changed no file: its worktree was removed." in second
    assert agent_branches(repo) == [branch]


def test_isolation_outside_a_repository_fails_the_task_with_a_reason(server, tmp_path):
    (tmp_path / ".agent" / "agents").mkdir(parents=True)
    (tmp_path / ".agent" / "agents" / "builder.md").write_text(AGENT_FILE)
    server.script(task("make it"), Reply(text="could not"))
    env = provider_env(server, "chat")
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "m", "go"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    output = server.requests[1].body["messages"][-1]["content"]
    assert "isolation: worktree" in output and "not inside a git repository" in output


def test_the_projects_deny_rules_hold_in_the_subagents_worktree(server, tmp_path):
    repo = committed_repo(
        tmp_path / "repo",
        {
            "secret.txt": "do not read\n",
            ".claude/settings.json": json.dumps({"permissions": {"deny": ["Read(secret.txt)"]}}),
        },
    )
    (repo / ".agent" / "agents").mkdir(parents=True)
    (repo / ".agent" / "agents" / "builder.md").write_text(AGENT_FILE.replace("tools: Bash", "tools: Bash, Read"))
    server.script(
        task("read secret.txt"),
        Reply(tool_calls=[ToolCall("read_file", {"path": "secret.txt"})]),
        Reply(text="it is denied"),
        Reply(text="done"),
    )
    env = provider_env(server, "chat")
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "m", "go"], cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    output = server.requests[2].body["messages"][-1]["content"]
    assert "do not read" not in output and "deny" in output.lower()
