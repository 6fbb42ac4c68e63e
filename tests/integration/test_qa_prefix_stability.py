"""QA: the prompt prefix stays byte-stable over several turns (issue #4), on every provider.

The existing exec test covers one multi-step turn on Chat Completions; this one adds a second
turn (through `agent exec resume --last`) and the Responses and Messages wire formats.
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall


def conversation(request) -> list:
    """The part of a request that must only ever grow: system prompt, tools, then the items."""
    body = request.body
    if request.protocol == "responses":
        return [body.get("instructions"), body.get("tools"), *body["input"]]
    if request.protocol == "chat":
        return [body.get("tools"), *body["messages"]]
    # Anthropic: cache_control breakpoints move to the newest turn by design and are not part of
    # the cached prefix's content, so compare without them.
    return strip_cache_control([body.get("system"), body.get("tools"), *body["messages"]])


def strip_cache_control(value):
    if isinstance(value, dict):
        return {k: strip_cache_control(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [strip_cache_control(v) for v in value]
    return value


def as_bytes(items: list) -> str:
    return json.dumps(items, ensure_ascii=False, sort_keys=True)


@pytest.mark.parametrize("provider", ["openai-chat", "openai", "anthropic"])
def test_each_request_extends_the_previous_one_over_two_turns(server, tmp_path, provider):
    repo = git_init(tmp_path / "repo")
    (repo / "AGENTS.md").write_text("RULE: keep it small\n")
    server.script(
        Reply(text="step 1", tool_calls=[ToolCall("shell", {"command": "echo one"})]),
        Reply(tool_calls=[ToolCall("read_file", {"path": "AGENTS.md"}), ToolCall("list_dir", {"path": "."})]),
        Reply(text="first turn done"),
        Reply(text="second turn done"),
    )
    env = provider_env(server, provider)
    first = run_agent(["exec", "--provider", provider, "-m", "m", "do it"], cwd=repo, env=env)
    assert first.returncode == 0, first.stderr
    second = run_agent(["exec", "resume", "--last", "and now the rest"], cwd=repo, env=env)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "second turn done"

    assert len(server.requests) == 4
    prompts = [conversation(request) for request in server.requests]
    for index, (earlier, later) in enumerate(zip(prompts, prompts[1:]), start=1):
        assert later[: len(earlier)] == earlier, f"request {index + 1} does not extend request {index}"
        # byte level: the serialized earlier items are a prefix of the later ones
        assert as_bytes(later)[: len(as_bytes(earlier)) - 1] == as_bytes(earlier)[:-1]
    assert "and now the rest" in json.dumps(server.requests[3].body)
    server.assert_done()
