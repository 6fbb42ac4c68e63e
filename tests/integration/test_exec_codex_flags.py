"""`agent exec` accepts `codex exec`'s command line, and the headless limits script authors use:
real `python -m agent_cli exec` processes against the fake server."""

from __future__ import annotations

import json

import pytest

from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall, Usage

PROVIDERS = ["openai-chat", "openai", "anthropic"]
SCHEMA = {
    "type": "object",
    "properties": {"answer": {"type": "integer"}},
    "required": ["answer"],
    "additionalProperties": False,
}


def exec_args(provider: str, *rest: str) -> list[str]:
    return ["exec", "--provider", provider, "-m", "test-model", *rest]


def json_events(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines()]


def sessions(home) -> list:
    return sorted((home / "sessions").rglob("*.jsonl")) if (home / "sessions").is_dir() else []


def test_the_prompt_comes_from_stdin_with_codex_flags(server, tmp_path):
    server.script(Reply(text="Read it from stdin."))
    work = git_init(tmp_path / "repo")
    args = [
        "exec",
        "--experimental-json",
        "--skip-git-repo-check",
        "--config",
        'model="test-model"',
        "--sandbox",
        "read-only",
        "--cd",
        str(work),
        "--color",
        "never",
    ]
    result = run_agent(args, cwd=tmp_path, env=provider_env(server, "openai"), stdin="the prompt on stdin")
    assert result.returncode == 0, result.stderr
    events = json_events(result.stdout)
    assert [e["type"] for e in events] == ["thread.started", "turn.started", "item.completed", "turn.completed"]
    assert "the prompt on stdin" in json.dumps(server.requests[0].body["input"][-1])
    assert server.requests[0].body["model"] == "test-model"


def test_resume_id_after_the_options_continues_the_thread(server, tmp_path, isolated_home):
    server.script(Reply(text="first"), lambda request: Reply(text=f"{len(request.body['input'])} items"))
    env = provider_env(server, "openai")
    first = run_agent(exec_args("openai", "--json", "hello"), cwd=tmp_path, env=env)
    thread_id = json_events(first.stdout)[0]["thread_id"]
    second = run_agent(
        ["exec", "--experimental-json", "-m", "test-model", "resume", thread_id], cwd=tmp_path, env=env, stdin="again"
    )
    assert second.returncode == 0, second.stderr
    assert json_events(second.stdout)[0] == {"type": "thread.started", "thread_id": thread_id}
    assert "hello" in json.dumps(server.requests[1].body["input"])
    assert len(sessions(isolated_home)) == 1


def test_add_dir_is_a_writable_root(server, tmp_path):
    extra = tmp_path / "extra"
    extra.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    target = extra / "written.txt"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"echo hi > {target}"})]), Reply(text="ok"))
    result = run_agent(
        exec_args("openai", "--full-auto", "--add-dir", str(extra), "write it"),
        cwd=work,
        env=provider_env(server, "openai"),
    )
    assert result.returncode == 0, result.stderr
    assert target.read_text() == "hi\n"


def test_a_missing_add_dir_is_a_usage_error(server, tmp_path):
    result = run_agent(
        exec_args("openai", "--add-dir", str(tmp_path / "nope"), "x"), cwd=tmp_path, env=provider_env(server, "openai")
    )
    assert result.returncode == 2 and "--add-dir" in result.stderr


def test_ephemeral_leaves_no_session_file(server, tmp_path, isolated_home):
    server.script(Reply(text="nothing kept"))
    result = run_agent(exec_args("openai", "--ephemeral", "hello"), cwd=tmp_path, env=provider_env(server, "openai"))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "nothing kept\n"
    assert sessions(isolated_home) == []


@pytest.mark.parametrize("provider", PROVIDERS)
def test_max_turns_stops_between_requests_with_its_exit_code(server, tmp_path, provider):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo one"})]))
    result = run_agent(
        exec_args(provider, "--json", "--max-turns", "1", "loop"), cwd=tmp_path, env=provider_env(server, provider)
    )
    assert result.returncode == 4, result.stderr
    failed = json_events(result.stdout)[-1]
    assert failed["type"] == "turn.failed" and failed["error"]["reason"] == "max_turns"
    assert "--max-turns 1" in failed["error"]["message"]
    assert len(server.requests) == 1
    server.assert_done()


def test_max_budget_stops_once_the_cost_is_reached(server, tmp_path):
    # gpt-5: $1.25 per million input tokens: 100,000 uncached tokens cost $0.125
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "true"})], usage=Usage(input_tokens=100_000, output_tokens=10))
    )
    args = ["exec", "--provider", "openai", "-m", "gpt-5", "--max-budget-usd", "0.1", "spend"]
    result = run_agent(args, cwd=tmp_path, env=provider_env(server, "openai"))
    assert result.returncode == 5, result.stderr
    assert "--max-budget-usd 0.1" in result.stderr
    assert len(server.requests) == 1


def test_max_budget_needs_a_price(server, tmp_path):
    result = run_agent(
        exec_args("openai", "--max-budget-usd", "1", "x"), cwd=tmp_path, env=provider_env(server, "openai")
    )
    assert result.returncode == 2 and "no price is known for model 'test-model'" in result.stderr
    priced = run_agent(
        exec_args("openai", "--max-budget-usd", "1", "-c", "model_prices.test-model={input=1.0, output=2.0}", "x"),
        cwd=tmp_path,
        env=provider_env(server, "openai"),
    )
    assert "no price" not in priced.stderr


@pytest.mark.parametrize("provider", PROVIDERS)
def test_output_schema_on_every_wire(server, tmp_path, provider):
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA))
    if provider == "anthropic":  # the answer comes as the input of a forced tool
        server.script(Reply(text="The answer is 42."), Reply(tool_calls=[ToolCall("final_answer", {"answer": 42})]))
    else:
        server.script(Reply(text='{"answer": 42}'))
    result = run_agent(
        exec_args(provider, "--output-schema", str(schema_file), "answer"),
        cwd=tmp_path,
        env=provider_env(server, provider),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"answer": 42}
    body = server.requests[0].body
    if provider == "openai":
        assert body["text"]["format"]["schema"] == SCHEMA
    elif provider == "openai-chat":
        assert body["response_format"]["json_schema"]["schema"] == SCHEMA
    else:
        forced = server.requests[1].body
        assert forced["tool_choice"] == {"type": "tool", "name": "final_answer"}
        assert next(t for t in forced["tools"] if t["name"] == "final_answer")["input_schema"] == SCHEMA
        assert "thinking" not in forced
    server.assert_done()


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_output_schema_repairs_once_then_fails_with_its_exit_code(server, tmp_path, provider):
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA))
    if provider == "anthropic":
        server.script(
            Reply(text="42"),
            Reply(tool_calls=[ToolCall("final_answer", {"answer": "many"})]),
            Reply(tool_calls=[ToolCall("final_answer", {"answer": "still"})]),
        )
    else:
        server.script(Reply(text='{"answer": "many"}'), Reply(text="not json"))
    result = run_agent(
        exec_args(provider, "--json", "--output-schema", str(schema_file), "answer"),
        cwd=tmp_path,
        env=provider_env(server, provider),
    )
    assert result.returncode == 3, result.stderr
    failed = json_events(result.stdout)[-1]
    assert failed["type"] == "turn.failed" and failed["error"]["reason"] == "output_schema"
    repair = json.dumps(server.requests[-1].body)
    assert "does not" in repair and "JSON Schema" in repair
    server.assert_done()


def test_output_schema_repair_that_succeeds(server, tmp_path):
    schema_file = tmp_path / "schema.json"
    schema_file.write_text(json.dumps(SCHEMA))
    server.script(Reply(text='{"answer": "many"}'), Reply(text='{"answer": 7}'))
    result = run_agent(
        exec_args("openai", "--output-schema", str(schema_file), "answer"),
        cwd=tmp_path,
        env=provider_env(server, "openai"),
    )
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == {"answer": 7}


def test_a_bad_output_schema_is_a_usage_error(tmp_path, server):
    bad = tmp_path / "bad.json"
    bad.write_text('{"type": 12}')
    result = run_agent(
        exec_args("openai", "--output-schema", str(bad), "x"), cwd=tmp_path, env=provider_env(server, "openai")
    )
    assert result.returncode == 2 and "not a valid JSON Schema" in result.stderr


def test_fatal_errors_are_error_events_in_json(server, tmp_path):
    server.script(Reply.http_error(400, message="no such model"))
    result = run_agent(exec_args("openai", "--json", "x"), cwd=tmp_path, env=provider_env(server, "openai"))
    assert result.returncode == 1
    events = json_events(result.stdout)
    assert events[-2]["type"] == "error" and "no such model" in events[-2]["message"]
    assert events[-1]["type"] == "turn.failed"


def test_color_always_colours_the_progress(server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "true"})]), Reply(text="done"))
    result = run_agent(exec_args("openai", "--color", "always", "x"), cwd=tmp_path, env=provider_env(server, "openai"))
    assert "\x1b[" in result.stderr
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "true"})]), Reply(text="done"))
    plain = run_agent(exec_args("openai", "--color", "never", "x"), cwd=tmp_path, env=provider_env(server, "openai"))
    assert "\x1b[" not in plain.stderr


def test_yolo_runs_without_a_sandbox(server, tmp_path):
    outside = tmp_path / "outside.txt"
    work = tmp_path / "work"
    work.mkdir()
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"echo x > {outside}"})]), Reply(text="ok"))
    result = run_agent(
        exec_args("openai", "--dangerously-bypass-approvals-and-sandbox", "x"),
        cwd=work,
        env=provider_env(server, "openai"),
    )
    assert result.returncode == 0, result.stderr
    assert outside.read_text() == "x\n"


def test_the_codex_sdks_config_values_are_understood(server, tmp_path):
    # What the TypeScript SDK sends for `webSearchEnabled: false` and `modelReasoningEffort: "xhigh"`
    server.script(Reply(text="fine"))
    args = [
        "exec",
        "--experimental-json",
        "-m",
        "gpt-5",
        "--config",
        'web_search="disabled"',
        "--config",
        'model_reasoning_effort="xhigh"',
    ]
    result = run_agent(args, cwd=tmp_path, env=provider_env(server, "openai"), stdin="hi")
    assert result.returncode == 0, result.stderr
    body = server.requests[0].body
    assert body["reasoning"]["effort"] == "xhigh"
    assert not any(tool.get("type") == "web_search" for tool in body.get("tools", []))
