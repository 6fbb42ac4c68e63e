"""Global options before and after every subcommand; a subcommand's name is never a prompt (issue 35, item 4)."""

from __future__ import annotations

from tests.conftest import provider_env, run_agent
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
