"""Global options before and after every subcommand; a subcommand's name is never a prompt (issue 35, item 4)."""

from __future__ import annotations

import ast

from agent_cli.cli import HEADLESS_COMMANDS
from tests.conftest import REPO, provider_env, run_agent
from tests.fake_server import Reply


def test_options_before_exec_and_before_exec_resume(server, tmp_path):
    env = provider_env(server, "openai-chat")
    server.script(Reply(text="first answer"), Reply(text="second answer"))
    first = run_agent(["--provider", "openai-chat", "-m", "test-model", "exec", "hello"], cwd=tmp_path, env=env)
    assert first.returncode == 0, first.stderr
    assert "first answer" in first.stdout
    again = run_agent(
        ["-m", "test-model", "--provider", "openai-chat", "exec", "resume", "--last", "more"], cwd=tmp_path, env=env
    )
    assert again.returncode == 0, again.stderr
    assert "second answer" in again.stdout
    assert [r.body["model"] for r in server.requests] == ["test-model", "test-model"]
    assert "exec" not in str(server.requests[0].body["messages"][-1])


def test_options_before_resume_go_to_resume_and_resume_is_no_prompt(server, tmp_path):
    env = provider_env(server, "anthropic")
    result = run_agent(
        ["--provider", "anthropic", "-m", "claude-sonnet-4-5", "resume", "--last"], cwd=tmp_path, env=env
    )
    assert result.returncode == 2
    assert "there is no saved session to resume" in result.stderr
    assert "unrecognized arguments" not in result.stderr
    assert not server.requests


def test_options_before_doctor(tmp_path):
    result = run_agent(["-m", "test-model", "--provider", "ollama", "doctor", "--no-request"], cwd=tmp_path)
    assert "ollama" not in result.stderr
    assert "  config " in result.stdout


def subcommands_dispatched() -> set[str]:
    """The words cli.dispatch takes as a subcommand: ``argv[0] == "x"``, ``argv[0] in (...)``,
    ``argv[:2] == ["x", ...]`` and the keys of HEADLESS_COMMANDS."""
    tree = ast.parse((REPO / "agent_cli" / "cli.py").read_text())
    function = next(node for node in tree.body if isinstance(node, ast.FunctionDef) and node.name == "dispatch")
    words = set(HEADLESS_COMMANDS)
    for node in ast.walk(function):
        if isinstance(node, ast.Compare) and ast.unparse(node.left) in ("argv[0]", "argv[:2]", "argv[:1]"):
            for constant in ast.walk(node.comparators[0]):
                if isinstance(constant, ast.Constant) and isinstance(constant.value, str):
                    words.add(constant.value)
                    break
    return words


def test_help_lists_every_subcommand(tmp_path):
    """Issue 51, item 8: `agent --help` named neither login, logout nor doctor."""
    result = run_agent(["--help"], cwd=tmp_path)
    assert result.returncode == 0
    listed = {
        line.split()[0] for line in result.stdout.split("subcommands")[-1].splitlines()[1:] if line.startswith("  ")
    }
    assert {"login", "logout", "doctor", "exec", "resume", "sessions", "worktree", "mcp"} <= listed
    assert subcommands_dispatched() <= listed, "a subcommand `agent --help` does not list"
