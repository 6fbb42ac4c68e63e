"""The Chat Completions client against the fake server, over HTTP."""

from __future__ import annotations

import json

import pytest

from agent_cli import items
from agent_cli.items import Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.base import Prompt, ReasoningDelta, TextDelta, Usage
from tests.fake_server import FakeModelServer, Reply
from tests.fake_server import ToolCall as FakeCall
from tests.fake_server import Usage as FakeUsage
from tests.integration.model_client_helpers import SHELL, collect, completed, make_client, output_items, text_deltas

pytestmark = pytest.mark.usefixtures("script_used_up")  # every test uses up its script


async def test_streams_text_deltas_and_one_message(server):
    server.script(Reply(text="Streaming from a local model.", chunk_size=3))
    events = await collect(make_client(server, "chat"), Prompt("sys", [items.user("hi")]))
    assert len([e for e in events if isinstance(e, TextDelta)]) > 3
    assert text_deltas(events) == "Streaming from a local model."
    assert output_items(events) == [Message("assistant", "Streaming from a local model.")]
    assert completed(events).response_id.startswith("chatcmpl")
    body = server.requests[0].body
    assert body["stream"] is True and body["stream_options"] == {"include_usage": True}
    assert "tools" not in body  # no empty tools list for servers that reject it


async def test_several_tool_calls_accumulated_by_index(server):
    server.script(
        Reply(
            text="Running both.",
            tool_calls=[
                FakeCall("shell", {"command": "echo one two three"}, call_id="call_x"),
                FakeCall("shell", {"command": "ls"}, call_id="call_y"),
            ],
            chunk_size=3,
        )
    )
    events = await collect(make_client(server, "chat"), Prompt("", [items.user("go")], [SHELL]))
    assert output_items(events) == [
        Message("assistant", "Running both."),
        ToolCall("call_x", "shell", json.dumps({"command": "echo one two three"})),
        ToolCall("call_y", "shell", json.dumps({"command": "ls"})),
    ]
    assert server.requests[0].body["tools"] == [
        {
            "type": "function",
            "function": {"name": "shell", "description": "Run a command", "parameters": SHELL.parameters},
        }
    ]


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning"])
async def test_reasoning_deltas_from_either_field(field):
    with FakeModelServer(chat_reasoning_field=field) as server:
        server.script(Reply(reasoning="Hmm, consider the options.", text="Answer."))
        events = await collect(make_client(server, "chat"), Prompt("", [items.user("q")]))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Hmm, consider the options."
    assert output_items(events) == [Reasoning("Hmm, consider the options."), Message("assistant", "Answer.")]


async def test_usage_mapping(server):
    server.script(
        Reply(
            text="ok", usage=FakeUsage(input_tokens=900, cached_input_tokens=512, output_tokens=40, reasoning_tokens=7)
        )
    )
    events = await collect(make_client(server, "chat"), Prompt("", [items.user("q")]))
    assert completed(events).usage == Usage(900, 512, 40, 7)


async def test_history_mapping_merges_calls_and_sends_developer_as_system(server):
    server.script(Reply(text="next"))
    history = [
        items.developer("mode: agent"),
        items.user("fix it"),
        Reasoning("private thoughts", encrypted_content="ENC"),
        Message("assistant", "Checking."),
        ToolCall("call_1", "shell", '{"command": "ls"}'),
        ToolCall("call_2", "shell", '{"command": "pwd"}'),
        ToolOutput("call_1", "a.py"),
        ToolOutput("call_2", "/repo"),
        ToolCall("call_3", "shell", '{"command": "cat a.py"}'),
        ToolOutput("call_3", "print()"),
        items.developer("approval mode changed"),
        items.user("and now?"),
    ]
    await collect(make_client(server, "chat", max_output_tokens=300), Prompt("You are helpful.", history, [SHELL]))
    body = server.requests[0].body
    assert body["max_completion_tokens"] == 300

    def call(cid: str, cmd: str) -> dict:
        return {"id": cid, "type": "function", "function": {"name": "shell", "arguments": json.dumps({"command": cmd})}}

    assert body["messages"] == [
        {"role": "system", "content": "You are helpful.\n\nmode: agent"},
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": "Checking.", "tool_calls": [call("call_1", "ls"), call("call_2", "pwd")]},
        {"role": "tool", "tool_call_id": "call_1", "content": "a.py"},
        {"role": "tool", "tool_call_id": "call_2", "content": "/repo"},
        {"role": "assistant", "content": None, "tool_calls": [call("call_3", "cat a.py")]},
        {"role": "tool", "tool_call_id": "call_3", "content": "print()"},
        {"role": "system", "content": "approval mode changed"},
        {"role": "user", "content": "and now?"},
    ]


async def test_local_provider_uses_max_tokens_and_needs_no_key(server):
    from agent_cli.models.registry import BUILTIN_PROVIDERS, create_client

    server.script(Reply(text="hi"))
    client = create_client(
        BUILTIN_PROVIDERS["ollama"], "llama3.1:8b", api_key=None, base_url=server.openai_base_url, max_output_tokens=64
    )
    events = await collect(client, Prompt("", [items.user("q")]))
    assert output_items(events) == [Message("assistant", "hi")]
    assert server.requests[0].body["max_tokens"] == 64
    assert server.requests[0].headers["authorization"] == "Bearer not-needed"


async def test_server_that_omits_usage(server):
    # Without include_usage the fake (like many servers) sends no usage chunk at all.
    server.script(lambda request: (request.body.pop("stream_options"), Reply(text="fine"))[1])
    events = await collect(make_client(server, "chat"), Prompt("", [items.user("q")]))
    assert completed(events).usage is None
    assert output_items(events) == [Message("assistant", "fine")]
