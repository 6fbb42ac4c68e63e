"""Slash commands through `agent exec`: a real subprocess, the fake server over HTTP."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply

RUBRIC = "You are reviewing a code change as a careful senior engineer"


def exec_args(*rest: str) -> list[str]:
    return ["exec", "--provider", "openai-chat", "-m", "test-model", *rest]


def last_user_text(request) -> str:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"][-1]


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = git_init(tmp_path / "repo")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("def handler(request):\n    return request.user.name\n")
    return root


def agent(server, repo: Path, *args: str):
    return run_agent(exec_args(*args), cwd=repo, env=provider_env(server, "openai-chat"))


def test_review_of_a_file_sends_the_file_and_the_rubric(server, repo):
    server.script(Reply(text="[P1] request.user may be None — src/app.py:2\n\npatch is incorrect"))
    result = agent(server, repo, "/review @src/app.py")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[P1] request.user may be None — src/app.py:2\n\npatch is incorrect\n"
    sent = last_user_text(server.requests[0])
    assert sent.startswith(RUBRIC)
    assert "     2\t    return request.user.name" in sent
    assert sorted(t["function"]["name"] for t in server.requests[0].body["tools"]) == [
        "grep",
        "list_dir",
        "memory_search",
        "read_file",
    ]
    assert "/review @src/app.py" in result.stderr  # progress shows what was typed, not the whole rubric
    server.assert_done()


def test_a_custom_command_file_runs_with_its_arguments(server, repo):
    commands = repo / ".agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "mycmd.md").write_text(
        "---\ndescription: test command\n---\nDo the thing with [$1] and [$2]; all: $ARGUMENTS\n"
    )
    server.script(Reply(text="did the thing"))
    result = agent(server, repo, "/mycmd some args")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "did the thing\n"
    assert last_user_text(server.requests[0]) == "Do the thing with [some] and [args]; all: some args"


def test_a_user_command_file_from_agent_home_runs(server, repo, isolated_home):
    (isolated_home / "commands" / "team").mkdir(parents=True)
    (isolated_home / "commands" / "team" / "standup.md").write_text("Write my standup notes.")
    server.script(Reply(text="notes"))
    result = agent(server, repo, "/team:standup for today")
    assert result.returncode == 0, result.stderr
    assert last_user_text(server.requests[0]) == "Write my standup notes.\n\nfor today"


def test_an_unknown_command_exits_2_naming_close_matches(server, repo):
    result = agent(server, repo, "/revieww @src/app.py")
    assert result.returncode == 2
    assert "unknown command /revieww; did you mean /review" in result.stderr
    assert result.stdout == "" and server.requests == []


def test_nope_exits_2_and_lists_what_is_close(server, repo):
    result = agent(server, repo, "/nope")
    assert result.returncode == 2
    assert "unknown command /nope; did you mean /" in result.stderr and "/help" in result.stderr
    assert server.requests == []


def test_an_unknown_command_in_json_mode(server, repo):
    result = agent(server, repo, "--json", "/stauts")
    assert result.returncode == 2
    items = [json.loads(line).get("item", {}) for line in result.stdout.splitlines()]
    error = next(item for item in items if item.get("type") == "error")
    assert "status" in error["suggestions"]


def test_a_missing_file_exits_2_naming_it(server, repo):
    result = agent(server, repo, "explain @src/missing.py")
    assert result.returncode == 2
    assert "@src/missing.py: no such file or directory" in result.stderr
    assert server.requests == []


def test_a_file_outside_the_workspace_is_refused(server, repo):
    result = agent(server, repo, "show me @../../../../../../etc/passwd")
    assert result.returncode == 2 and "outside the workspace" in result.stderr
    assert server.requests == []


def test_status_and_context_print_without_calling_the_model(server, repo):
    status = agent(server, repo, "/status")
    assert status.returncode == 0, status.stderr
    assert "test-model" in status.stderr and "openai-chat" in status.stderr and "approval" in status.stderr
    context = agent(server, repo, "/context")
    assert context.returncode == 0, context.stderr
    assert "system prompt" in context.stderr and "tool schemas" in context.stderr and "% window" in context.stderr
    assert server.requests == []


def test_quit_just_ends(server, repo):
    result = agent(server, repo, "/quit")
    assert (result.returncode, result.stdout, server.requests) == (0, "", [])


def test_init_in_exec_refuses_to_overwrite_then_force_does(server, repo):
    (repo / "AGENTS.md").write_text("mine\n")
    refused = agent(server, repo, "/init")
    assert refused.returncode == 2 and "/init --force" in refused.stderr
    assert (repo / "AGENTS.md").read_text() == "mine\n"
    server.script(Reply(text="# Agents\n\nRun the tests with pytest.\n"))
    forced = agent(server, repo, "/init --force")
    assert forced.returncode == 0, forced.stderr
    assert (repo / "AGENTS.md").read_text() == "# Agents\n\nRun the tests with pytest.\n"
