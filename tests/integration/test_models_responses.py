"""The Responses client against the fake server, over HTTP."""

from __future__ import annotations

import json

import pytest

from agent_cli import items
from agent_cli.items import Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.base import Prompt, ReasoningDelta, TextDelta, Usage
from agent_cli.models.errors import ContextWindowExceeded
from tests.fake_server import Reply, encrypted_reasoning
from tests.fake_server import ToolCall as FakeCall
from tests.fake_server import Usage as FakeUsage
from tests.integration.model_client_helpers import SHELL, collect, completed, make_client, output_items, text_deltas

pytestmark = pytest.mark.usefixtures("script_used_up")  # every test uses up its script


async def test_streams_text_deltas_and_one_message(server):
    server.script(Reply(text="Hello there, this is streamed in pieces.", chunk_size=5))
    events = await collect(make_client(server, "responses"), Prompt("be brief", [items.user("hi")]))
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 3
    assert text_deltas(events) == "Hello there, this is streamed in pieces."
    [message] = output_items(events)
    assert message == Message("assistant", "Hello there, this is streamed in pieces.", id=message.id)
    assert message.id.startswith("msg")  # kept, though never sent back (store=False)
    assert completed(events).response_id.startswith("resp")


async def test_tool_calls_with_arguments_split_across_deltas(server):
    server.script(
        Reply(
            tool_calls=[
                FakeCall("shell", {"command": "ls -la /tmp"}, call_id="call_a"),
                FakeCall("shell", {"command": "pwd"}),
            ],
            chunk_size=4,
        )
    )
    events = await collect(make_client(server, "responses"), Prompt("", [items.user("list")], [SHELL]))
    calls = [i for i in output_items(events) if isinstance(i, ToolCall)]
    assert [(c.call_id, c.name, json.loads(c.arguments)) for c in calls] == [
        ("call_a", "shell", {"command": "ls -la /tmp"}),
        (calls[1].call_id, "shell", {"command": "pwd"}),
    ]
    assert calls[1].call_id and calls[1].call_id != "call_a"
    body = server.requests[0].body
    assert body["tools"] == [
        {
            "type": "function",
            "name": "shell",
            "description": "Run a command",
            "parameters": SHELL.parameters,
            "strict": False,
        }
    ]
    assert body["parallel_tool_calls"] is True


async def test_reasoning_deltas_and_encrypted_reasoning_item(server):
    server.script(Reply(reasoning="Let me think about it.", text="Done."))
    events = await collect(make_client(server, "responses", reasoning_effort="high"), Prompt("", [items.user("q")]))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Let me think about it."
    reasoning = output_items(events)[0]
    assert reasoning == Reasoning(
        "Let me think about it.", id=reasoning.id, encrypted_content=encrypted_reasoning("Let me think about it.")
    )
    assert reasoning.id.startswith("rs")
    body = server.requests[0].body
    assert body["include"] == ["reasoning.encrypted_content"]
    assert body["reasoning"] == {"summary": "auto", "effort": "high"}
    assert body["store"] is False and body["stream"] is True


async def test_non_reasoning_model_gets_no_reasoning_parameters(server):
    server.script(Reply(text="ok"))
    await collect(make_client(server, "responses", model="gpt-4.1"), Prompt("", [items.user("q")]))
    body = server.requests[0].body
    assert "include" not in body and "reasoning" not in body


async def test_usage_mapping(server):
    server.script(
        Reply(
            text="ok",
            usage=FakeUsage(input_tokens=1200, cached_input_tokens=1000, output_tokens=50, reasoning_tokens=20),
        )
    )
    events = await collect(make_client(server, "responses"), Prompt("", [items.user("q")]))
    assert completed(events).usage == Usage(1200, 1000, 50, 20)


async def test_history_is_mapped_to_input_items(server):
    server.script(Reply(text="next"))
    history = [
        items.developer("mode: agent"),
        items.user("fix the bug"),
        Reasoning("thinking", id="rs_9", encrypted_content="ENC"),
        Reasoning("from another provider", signature="sig"),  # cannot be sent with store=False
        Message("assistant", "Looking."),
        ToolCall("call_1", "shell", '{"command": "ls"}', id="fc_1"),
        ToolCall("call_2", "shell", '{"command": "pwd"}'),
        ToolOutput("call_1", "a.py"),
        ToolOutput("call_2", "/repo", success=False),
    ]
    max_tokens_client = make_client(server, "responses", max_output_tokens=777)
    await collect(max_tokens_client, Prompt("You are helpful.", history, [SHELL]))
    body = server.requests[0].body
    assert body["instructions"] == "You are helpful."
    assert body["max_output_tokens"] == 777
    assert body["input"] == [
        {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "mode: agent"}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "fix the bug"}]},
        {
            "type": "reasoning",
            "id": "rs_9",
            "summary": [{"type": "summary_text", "text": "thinking"}],
            "encrypted_content": "ENC",
        },
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Looking."}]},
        {"type": "function_call", "call_id": "call_1", "name": "shell", "arguments": '{"command": "ls"}'},
        {"type": "function_call", "call_id": "call_2", "name": "shell", "arguments": '{"command": "pwd"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": "a.py"},
        {"type": "function_call_output", "call_id": "call_2", "output": "/repo"},
    ]


async def test_context_length_in_stream_failure(server):
    server.script(Reply.context_length_exceeded(in_stream=True))
    with pytest.raises(ContextWindowExceeded, match="context window"):
        await collect(make_client(server, "responses"), Prompt("", [items.user("q")]))
    assert len(server.requests) == 1  # not retried
