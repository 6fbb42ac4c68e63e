"""One rule for stop reasons on every wire: a cut-off answer says so and, in agent mode, the model is
asked once to continue; `pause_turn` continues the turn; exec --json reports the stop reason."""

from __future__ import annotations

import json

import pytest

from agent_cli import events as ev
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply
from tests.integration.test_stream_faults import anthropic_events, chunk
from tests.session_helpers import collect_events, make_session

pytestmark = pytest.mark.usefixtures("script_used_up")


def cut_off(provider: str, text: str) -> Reply:
    if provider == "anthropic":
        return Reply.raw(anthropic_events(text, "max_tokens"))
    return Reply.raw([chunk({"content": text}), chunk({}, finish="length"), "[DONE]"])


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
async def test_a_cut_off_answer_is_reported_and_continued_once_in_agent_mode(server, tmp_path, monkeypatch, provider):
    server.script(cut_off(provider, "The first half"), cut_off(provider, "and still more"))
    session = make_session(server, tmp_path, monkeypatch, provider=provider)
    events = await collect_events(session, "write a lot")
    warnings = [e.message for e in events if isinstance(e, ev.Warning)]
    assert len(warnings) == 2 and "cut off" in warnings[0] and "asking the model to continue" in warnings[0]
    assert "continue" not in warnings[1].split("(")[-1]  # the second cut is reported, not continued again
    [done] = [e for e in events if isinstance(e, ev.TurnComplete)]
    assert done.stop_reason == "max_tokens" and done.last_message == "and still more"
    second = json.dumps(server.requests[1].body)
    assert "The first half" in second and "cut off by the output token limit" in second


async def test_a_cut_off_answer_is_not_continued_outside_agent_mode(server, tmp_path, monkeypatch):
    server.script(cut_off("openai-chat", "Half"))
    session = make_session(server, tmp_path, monkeypatch, 'mode="ask"')
    events = await collect_events(session, "explain")
    assert [e.stop_reason for e in events if isinstance(e, ev.TurnComplete)] == ["max_tokens"]
    assert len(server.requests) == 1 and any("cut off" in e.message for e in events if isinstance(e, ev.Warning))


async def test_pause_turn_continues_the_turn(server, tmp_path, monkeypatch):
    server.script(Reply.raw(anthropic_events("Searching...", "pause_turn")), Reply(text="Found it."))
    session = make_session(server, tmp_path, monkeypatch, provider="anthropic")
    events = await collect_events(session, "look it up")
    [done] = [e for e in events if isinstance(e, ev.TurnComplete)]
    assert done.stop_reason == "end" and done.last_message == "Found it."
    assert "Searching..." in json.dumps(server.requests[1].body)  # the paused content goes back as is


def test_exec_json_reports_the_stop_reason(server, tmp_path):
    server.script(cut_off("openai-chat", "Half"), cut_off("openai-chat", "and more"))
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "m", "--json", "go"],
        cwd=tmp_path,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    last = json.loads(result.stdout.splitlines()[-1])
    assert last["type"] == "turn.completed" and last["stop_reason"] == "max_tokens"


def test_exec_json_names_the_request_id_of_a_failed_request(server, tmp_path):
    server.script(Reply.http_error(400, message="bad field"))
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "m", "--json", "go"],
        cwd=tmp_path,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 1
    error = json.loads(result.stdout.splitlines()[-1])["error"]
    assert error["request_id"].startswith("req_") and error["request_id"] in error["message"]


def cut_off_call(provider: str, partial_arguments: str) -> Reply:
    """A response cut off by the output limit while the model was writing a `shell` call."""
    if provider == "anthropic":
        events = anthropic_events("Running it.", "max_tokens")
        start = {
            "type": "content_block_start",
            "index": 1,
            "content_block": {"type": "tool_use", "id": "toolu_cut", "name": "shell", "input": {}},
        }
        deltas = (
            [
                {
                    "type": "content_block_delta",
                    "index": 1,
                    "delta": {"type": "input_json_delta", "partial_json": partial_arguments},
                }
            ]
            if partial_arguments
            else []
        )
        block = [
            ("content_block_start", start),
            *[("content_block_delta", d) for d in deltas],
            ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ]
        return Reply.raw(events[:4] + block + events[4:])
    call = {
        "index": 0,
        "id": "call_cut",
        "type": "function",
        "function": {"name": "shell", "arguments": partial_arguments},
    }
    return Reply.raw(
        [chunk({"content": "Running it."}), chunk({"tool_calls": [call]}), chunk({}, finish="length"), "[DONE]"]
    )


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic"])
@pytest.mark.parametrize("partial", ['{"command": "touch made-by-a-cut-call', ""])
async def test_a_call_cut_off_by_the_output_limit_is_not_run_and_the_model_is_told_why(
    server, tmp_path, monkeypatch, provider, partial
):
    server.script(cut_off_call(provider, partial), Reply(text="I will split it."))
    session = make_session(server, tmp_path, monkeypatch, provider=provider)
    events = await collect_events(session, "write a big file")
    assert not any(isinstance(e, ev.ToolCallBegin) for e in events if getattr(e, "name", "") == "shell")
    warnings = [e.message for e in events if isinstance(e, ev.Warning)]
    assert any("cut off" in w and "shell" in w for w in warnings), warnings
    second = json.dumps(server.requests[1].body)
    assert "cut off by the output token limit" in second and "not run" in second
    assert not any(tmp_path.rglob("made-by-a-cut-call"))
