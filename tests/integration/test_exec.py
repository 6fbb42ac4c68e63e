"""`agent exec` end to end: a real subprocess, the fake server over HTTP."""

from __future__ import annotations

import asyncio
import json
import os
import pty
import signal
import subprocess
import sys

import pytest

from tests.conftest import REPO, git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall, Usage
from tests.processes import alive, started

PROVIDERS = ["openai-chat", "openai", "anthropic"]


def exec_args(provider: str, *rest: str) -> list[str]:
    return ["exec", "--provider", provider, "-m", "test-model", *rest]


def tool_output_text(request) -> str:
    """The text of the tool output sent back to the model, whatever the wire format."""
    body = request.body
    if request.protocol == "responses":
        return next(i["output"] for i in body["input"] if i.get("type") == "function_call_output")
    if request.protocol == "chat":
        return next(m["content"] for m in body["messages"] if m["role"] == "tool")
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]
    result = next(b for b in blocks if b.get("type") == "tool_result")
    content = result["content"]
    return content if isinstance(content, str) else "".join(part["text"] for part in content)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_turn_with_a_shell_call_completes_on_every_provider(server, tmp_path, provider):
    server.script(
        Reply(text="Let me look.", tool_calls=[ToolCall("shell", {"command": "echo hello-from-shell"})]),
        Reply(text="The shell said hello."),
    )
    result = run_agent(exec_args(provider, "say hello"), cwd=tmp_path, env=provider_env(server, provider))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The shell said hello.\n"
    assert "echo hello-from-shell" in result.stderr  # progress goes to stderr
    output = tool_output_text(server.requests[1])
    assert "Exit code: 0" in output and "hello-from-shell" in output
    server.assert_done()


def test_json_output_follows_the_exec_schema(server, tmp_path):
    server.script(
        Reply(
            text="Running it.",
            tool_calls=[ToolCall("shell", {"command": "printf 'a\\nb\\n'"})],
            usage=Usage(input_tokens=100, cached_input_tokens=40, output_tokens=10),
        ),
        Reply(text="All done.", usage=Usage(input_tokens=150, cached_input_tokens=100, output_tokens=5)),
    )
    # Codex's own item types only (the golden file shows agent-cli's checkpoint_created among them).
    result = run_agent(
        exec_args("openai-chat", "-c", "checkpoints=false", "--json", "go"),
        cwd=tmp_path,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    shape = [(e["type"], e.get("item", {}).get("type")) for e in events]
    assert shape == [
        ("thread.started", None),
        ("turn.started", None),
        ("item.completed", "agent_message"),
        ("item.started", "command_execution"),
        ("item.completed", "command_execution"),
        ("item.completed", "agent_message"),
        ("turn.completed", None),
    ]
    assert events[0]["thread_id"]
    started, completed = events[3]["item"], events[4]["item"]
    assert started == {
        "id": started["id"],
        "type": "command_execution",
        "command": "printf 'a\\nb\\n'",
        "aggregated_output": "",
        "exit_code": None,
        "status": "in_progress",
    }
    assert completed["id"] == started["id"]
    assert completed["exit_code"] == 0 and completed["status"] == "completed"
    assert "a\nb" in completed["aggregated_output"]
    assert events[5]["item"]["text"] == "All done."
    assert events[-1]["usage"] == {
        "input_tokens": 250,
        "cached_input_tokens": 140,
        "output_tokens": 15,
        "reasoning_output_tokens": 0,
    }
    assert len({e["item"]["id"] for e in events if "item" in e}) == 3  # one id per item, shared by started/completed


def test_prompt_plus_piped_stdin_appends_a_stdin_block(server, tmp_path):
    server.script(Reply(text="ok"))
    result = run_agent(
        exec_args("openai-chat", "summarize this"),
        cwd=tmp_path,
        env=provider_env(server, "openai-chat"),
        stdin="line one\nline two\n",
    )
    assert result.returncode == 0, result.stderr
    last_user = server.requests[0].body["messages"][-1]["content"]
    assert last_user == "summarize this\n\n<stdin>\nline one\nline two\n</stdin>"


@pytest.mark.parametrize("prompt_args", [["-"], []])
def test_prompt_from_stdin(server, tmp_path, prompt_args):
    server.script(Reply(text="ok"))
    result = run_agent(
        exec_args("openai-chat", *prompt_args),
        cwd=tmp_path,
        env=provider_env(server, "openai-chat"),
        stdin="the whole prompt\n",
    )
    assert result.returncode == 0, result.stderr
    assert server.requests[0].body["messages"][-1]["content"] == "the whole prompt\n"


def test_terminal_on_stdin_without_prompt_is_a_usage_error_not_a_hang(tmp_path):
    controller, terminal = pty.openpty()
    env = {**os.environ, "PYTHONPATH": str(REPO), "OPENAI_API_KEY": "x"}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "agent_cli", "exec"],
            stdin=terminal,
            capture_output=True,
            text=True,
            cwd=tmp_path,
            env=env,
            timeout=30,
        )
    finally:
        os.close(controller)
        os.close(terminal)
    assert proc.returncode == 2
    assert "no prompt given" in proc.stderr


def test_missing_key_is_one_line_naming_the_variable(tmp_path):
    result = run_agent(["exec", "--provider", "openai", "hi"], cwd=tmp_path)
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "OPENAI_API_KEY is not set" in lines[0] and "OPENAI_BASE_URL" in lines[0]


def test_a_blank_key_counts_as_missing(tmp_path):
    result = run_agent(["exec", "--provider", "openai", "hi"], cwd=tmp_path, env={"OPENAI_API_KEY": "  "})
    assert result.returncode == 2 and "OPENAI_API_KEY is not set" in result.stderr


def test_missing_anthropic_key(tmp_path):
    result = run_agent(["exec", "-m", "claude-sonnet-4-5", "hi"], cwd=tmp_path)
    assert result.returncode == 2
    assert "ANTHROPIC_API_KEY is not set" in result.stderr


def test_bad_config_exits_2_naming_the_file_and_key(tmp_path, isolated_home):
    (isolated_home / "config.toml").write_text("shell_timeout_ms = 'soon'\n")
    result = run_agent(["exec", "hi"], cwd=tmp_path, env={"OPENAI_API_KEY": "x"})
    assert result.returncode == 2
    assert "config.toml" in result.stderr and "shell_timeout_ms" in result.stderr and "integer" in result.stderr


def test_failed_turn_exits_1(server, tmp_path):
    server.script(Reply.http_error(401, message="bad key"))
    result = run_agent(exec_args("openai-chat", "hi"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 1
    assert "authentication failed" in result.stderr
    assert result.stdout == ""


def test_failed_turn_in_json_mode(server, tmp_path):
    server.script(Reply.http_error(404, message="no such model"))
    result = run_agent(exec_args("openai-chat", "--json", "hi"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 1
    last = json.loads(result.stdout.splitlines()[-1])
    assert last["type"] == "turn.failed" and "test-model" in last["error"]["message"]


def test_output_last_message_file(server, tmp_path):
    server.script(Reply(text="final words"))
    out = tmp_path / "last.txt"
    result = run_agent(
        exec_args("openai-chat", "-o", str(out), "hi"), cwd=tmp_path, env=provider_env(server, "openai-chat")
    )
    assert result.returncode == 0, result.stderr
    assert out.read_text() == "final words"


def test_retry_is_reported_and_the_turn_completes(server, tmp_path):
    server.script(Reply.http_error(429, retry_after=0), Reply(text="after retry"))
    result = run_agent(exec_args("openai-chat", "hi"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    assert "retrying (1/" in result.stderr
    assert result.stdout == "after retry\n"


def test_malformed_tool_arguments_are_reported_to_the_model(server, tmp_path):
    server.script(
        Reply(tool_calls=[ToolCall("shell", '{"command": "ls"')]),
        Reply(tool_calls=[ToolCall("no_such_tool", {})]),
        Reply(text="recovered"),
    )
    result = run_agent(exec_args("openai-chat", "hi"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    assert "not valid JSON" in tool_output_text(server.requests[1])
    assert "unknown tool 'no_such_tool'" in server.requests[2].body["messages"][-1]["content"]


def test_version_does_not_import_sdks_or_textual():
    code = (
        "import sys, runpy; sys.argv=['agent','--version']\n"
        "try:\n    runpy.run_module('agent_cli', run_name='__main__')\nexcept SystemExit: pass\n"
        "heavy = [m for m in ('openai', 'anthropic', 'textual', 'rich', 'tiktoken') if m in sys.modules]\n"
        "assert not heavy, heavy"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(REPO)}
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("agent-cli ")


def test_a_command_without_a_model_turn_prints_its_result_on_stdout(tmp_path):
    git_init(tmp_path)
    (tmp_path / "new.txt").write_text("fresh line\n")
    result = run_agent(["exec", "/diff"], cwd=tmp_path, env={"OPENAI_API_KEY": "x"})
    assert result.returncode == 0, result.stderr
    assert "+fresh line" in result.stdout


@pytest.mark.parametrize("command", ["/resume", "/new"])
def test_interactive_only_commands_are_usage_errors_in_exec(tmp_path, command):
    result = run_agent(["exec", command], cwd=tmp_path, env={"OPENAI_API_KEY": "x"})
    assert result.returncode == 2
    assert "needs the TUI" in result.stderr


def test_a_reader_that_goes_away_ends_exec_quietly(server, tmp_path):
    server.script(Reply(text="one " * 5000, chunk_size=50))
    env = {**os.environ, "PYTHONPATH": str(REPO), **provider_env(server, "openai-chat")}
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *exec_args("openai-chat", "--json", "hi")],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert json.loads(proc.stdout.readline())["type"] == "thread.started"
    proc.stdout.close()  # like `| head -1`
    stderr = proc.stderr.read().decode()
    assert proc.wait(timeout=60) == 141
    assert "Traceback" not in stderr


def test_non_utf8_config_is_a_usage_error_without_traceback(tmp_path, isolated_home):
    (isolated_home / "config.toml").write_bytes(b"model = '\xff'\n")
    result = run_agent(["exec", "hi"], cwd=tmp_path, env={"OPENAI_API_KEY": "x"})
    assert result.returncode == 2 and "not UTF-8" in result.stderr and "Traceback" not in result.stderr


def test_ctrl_c_stops_the_turn_cleanly_and_exits_130(server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "sleep 30.0202"})]))
    env = {**os.environ, "PYTHONPATH": str(REPO), "NO_COLOR": "1", **provider_env(server, "openai-chat")}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_cli",
            *exec_args("openai-chat", "--json", "-c", 'sandbox_mode="danger-full-access"', "hi"),
        ],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in proc.stdout:  # wait until the command runs
        if '"command_execution"' in line:
            break
    pid = asyncio.run(started("sleep", "30.0202"))
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 130
    assert "Traceback" not in err and "Unknown child process" not in err
    assert '"turn.failed"' in out and "interrupted by the user" in out
    events = [json.loads(line) for line in out.splitlines()]
    stopped = [e["item"] for e in events if e["type"] == "item.completed" and e["item"]["type"] == "command_execution"]
    assert [item["status"] for item in stopped] == ["failed"]  # the started item is not left in progress
    assert not alive(pid)  # ended before exec exited
