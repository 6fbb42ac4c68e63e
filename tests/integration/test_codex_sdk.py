"""OpenAI's Codex TypeScript SDK drives `agent exec` in place of the Codex binary
(``codexPathOverride``), over the fake model server: automation written for Codex runs unchanged.

Needs Node and the SDK installed in tests/node (`.ci/run` runs `npm install` there); without
them these tests skip and say why."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, agent_process_env
from tests.fake_server import Reply, ToolCall, Usage

NODE_DIR = REPO / "tests" / "node"
SDK = NODE_DIR / "node_modules" / "@openai" / "codex-sdk"

pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed"),
    pytest.mark.skipif(not SDK.is_dir(), reason="the Codex SDK is not installed: npm install --prefix tests/node"),
]


@pytest.fixture
def agent_binary(tmp_path) -> Path:
    """What the SDK starts instead of `codex`: this checkout's agent under this Python."""
    path = tmp_path / "bin" / "agent"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agent_cli "$@"\n')
    path.chmod(0o755)
    return path


def run_sdk(mode: str, agent: Path, workdir: Path, server, through_options: bool = False) -> dict | list:
    env = agent_process_env()
    if through_options:
        env["SDK_BASE_URL"] = server.openai_base_url
    else:
        env.update({"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "test-key"})
    proc = subprocess.run(
        ["node", str(NODE_DIR / "codex_sdk_run.mjs"), mode, str(agent), str(workdir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_two_runs_on_one_thread_resume_it(server, tmp_path, agent_binary):
    server.script(
        Reply(
            text="Running it.",
            tool_calls=[ToolCall("shell", {"command": "echo from-the-shell"})],
            usage=Usage(input_tokens=120, cached_input_tokens=20, output_tokens=9),
        ),
        lambda request: Reply(text="The command printed from-the-shell."),
        lambda request: Reply(text=f"Second turn saw {len(request.body['input'])} items."),
    )
    result = run_sdk("two-runs", agent_binary, tmp_path, server)
    first, second = result["first"], result["second"]
    assert first["finalResponse"] == "The command printed from-the-shell."
    codex_items = [item for item in first["items"] if item["type"] != "checkpoint_created"]  # ours, passed through
    assert [item["type"] for item in codex_items] == ["agent_message", "command_execution", "agent_message"]
    command = codex_items[1]
    assert command["command"] == "echo from-the-shell" and command["exit_code"] == 0
    assert command["status"] == "completed" and "from-the-shell" in command["aggregated_output"]
    assert first["usage"]["input_tokens"] >= 120 and first["usage"]["cached_input_tokens"] >= 20
    assert result["firstId"] == result["threadId"]  # the second run resumed the same session
    assert second["finalResponse"].startswith("Second turn saw")
    # the resumed request carries the whole first turn: prompt, call, output, answer, new prompt
    sent = server.requests[2].body["input"]
    assert any(item.get("type") == "function_call_output" for item in sent)
    assert "and once more" in json.dumps(sent[-1])
    server.assert_done()


def test_run_streamed_delivers_events_as_they_happen(server, tmp_path, agent_binary):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "sleep 1.5; echo slept"})]), Reply(text="Done."))
    seen = run_sdk("streamed", agent_binary, tmp_path, server)
    events = [entry["event"] for entry in seen]
    assert events[0]["type"] == "thread.started" and events[1]["type"] == "turn.started"
    started = next(
        e for e in seen if e["event"]["type"] == "item.started" and e["event"]["item"]["type"] == "command_execution"
    )
    completed = next(
        e for e in seen if e["event"]["type"] == "item.completed" and e["event"]["item"]["type"] == "command_execution"
    )
    # the start reached the SDK while the command still ran, not at the end of the run
    assert completed["at"] - started["at"] >= 1000
    assert events[-1]["type"] == "turn.completed" and set(events[-1]["usage"]) >= {
        "input_tokens",
        "cached_input_tokens",
        "output_tokens",
    }


def test_output_schema_returns_validated_json(server, tmp_path, agent_binary):
    server.script(Reply(text='{"summary": "all tests pass", "status": "ok"}'))
    turn = run_sdk("schema", agent_binary, tmp_path, server)
    assert json.loads(turn["finalResponse"]) == {"summary": "all tests pass", "status": "ok"}
    text_format = server.requests[0].body["text"]["format"]
    assert text_format["type"] == "json_schema" and text_format["schema"]["required"] == ["summary", "status"]


def test_a_failed_turn_is_an_error_in_the_sdk(server, tmp_path, agent_binary):
    server.script(*[Reply.http_error(400, message="model not found")])
    result = run_sdk("failure", agent_binary, tmp_path, server)
    assert result["threw"] and "model not found" in result["message"]


def test_the_sdk_options_for_server_and_key_work(server, tmp_path, agent_binary):
    server.script(Reply(text='{"summary": "fine", "status": "ok"}'))
    turn = run_sdk("schema", agent_binary, tmp_path, server, through_options=True)
    assert json.loads(turn["finalResponse"])["status"] == "ok"
    assert server.requests[0].headers.get("authorization") == "Bearer sdk-key"
