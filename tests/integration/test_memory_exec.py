"""Memory end to end through `agent exec` and the fake server: saved by the model in one session,
recalled in the next one's request when relevant, absent when not, never moving the prefix."""

from __future__ import annotations

import json

from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall

FACT = "Deploy to staging with `make ship-staging`, never with the raw deploy script."


def messages(request) -> list[dict]:
    return request.body["messages"]


def user_index(request, text: str) -> int:
    return next(i for i, m in enumerate(messages(request)) if m["role"] == "user" and m["content"] == text)


def fragments(request) -> list[str]:
    return [m["content"] for m in messages(request) if m["role"] == "user" and m["content"].startswith("<memories>")]


def exec_agent(server, repo, *args: str, resume: bool = False):
    command = ["exec", *(["resume", "--last"] if resume else []), "--provider", "openai-chat", "-m", "m", *args]
    result = run_agent(command, cwd=repo, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    return result


def test_saved_in_one_session_recalled_in_the_next_only_when_relevant(server, tmp_path):
    repo = git_init(tmp_path / "repo")
    server.script(
        Reply(tool_calls=[ToolCall("memory_save", {"text": FACT, "tags": ["deploy"]})]),
        Reply(text="noted"),
        Reply(text="step", tool_calls=[ToolCall("list_dir", {"path": "."})]),
        Reply(text="use make ship-staging"),
        Reply(text="again"),
        Reply(text="Paris"),
    )
    exec_agent(server, repo, "remember how we deploy")
    saved_output = next(m for m in messages(server.requests[1]) if m["role"] == "tool")["content"]
    assert saved_output.startswith("Saved p1 (project)")

    question = "How do I deploy the app to staging?"
    exec_agent(server, repo, question)
    first, second = server.requests[2], server.requests[3]
    at = user_index(first, question)
    fragment = messages(first)[at + 1]
    assert fragment["role"] == "user" and fragment["content"].startswith("<memories>\n- [p1] Deploy to staging")
    assert len(fragments(first)) == 1
    assert FACT not in messages(first)[0]["content"] + json.dumps(first.body["tools"])  # not in the system prompt
    assert messages(second)[: len(messages(first))] == messages(first)  # the turn's next request extends it

    exec_agent(server, repo, "And the staging deploy again?", resume=True)
    assert len(fragments(server.requests[4])) == 1  # already in this context: not repeated

    other = "What is the capital of France?"
    exec_agent(server, repo, other)
    unrelated = server.requests[5]
    assert fragments(unrelated) == [] and FACT not in json.dumps(unrelated.body)
    # A new session's prefix (system prompt, tools, initial context) is the same with or without recall.
    assert messages(unrelated)[: user_index(unrelated, other)] == messages(first)[:at]
    assert unrelated.body["tools"] == first.body["tools"]
    server.assert_done()


def test_memory_off_means_no_tools_no_prompt_part_no_recall(server, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    result = run_agent(["memory", "add", FACT], cwd=repo)
    assert result.returncode == 0 and result.stdout.strip() == "saved p1", result.stderr
    server.script(Reply(text="ok"))
    exec_agent(server, repo, "-c", "memory=false", "How do I deploy to staging?")
    body = json.dumps(server.requests[0].body)
    assert FACT not in body and "memory_save" not in body and "## Memory" not in body


def test_a_corrupt_memory_database_is_reported_and_the_session_goes_on(server, tmp_path, isolated_home):
    repo = tmp_path / "repo"
    repo.mkdir()
    from agent_cli.memory.book import project_db_path

    path = project_db_path(isolated_home, repo)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"garbage" * 1000)
    server.script(Reply(text="fine"))
    result = exec_agent(server, repo, "How do I deploy to staging?")
    assert result.stdout.strip() == "fine"
    assert "memory database" in result.stderr and "was damaged" in result.stderr
    assert len(list(path.parent.glob(path.name + ".corrupt-*"))) == 1
