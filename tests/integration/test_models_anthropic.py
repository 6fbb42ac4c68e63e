"""The Anthropic Messages client against the fake server, over HTTP."""

from __future__ import annotations

import json

import pytest

from agent_cli import items
from agent_cli.items import Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.base import Prompt, ReasoningDelta, TextDelta, ToolSpec, Usage
from tests.fake_server import Reply, encrypted_reasoning
from tests.fake_server import ToolCall as FakeCall
from tests.fake_server import Usage as FakeUsage
from tests.integration.model_client_helpers import SHELL, collect, completed, make_client, output_items, text_deltas

READ = ToolSpec("read_file", "Read a file", {"type": "object", "properties": {"path": {"type": "string"}}})
CACHE = {"type": "ephemeral"}

pytestmark = pytest.mark.usefixtures("script_used_up")  # every test uses up its script


async def test_streams_text_deltas_and_one_message(server):
    server.script(Reply(text="Claude streams this text.", chunk_size=4))
    events = await collect(make_client(server, "anthropic"), Prompt("sys", [items.user("hi")]))
    assert len([e for e in events if isinstance(e, TextDelta)]) > 3
    assert text_deltas(events) == "Claude streams this text."
    assert output_items(events) == [Message("assistant", "Claude streams this text.")]
    assert completed(events).response_id.startswith("msg")
    assert server.requests[0].body["max_tokens"] == 8192


async def test_tool_calls_and_signed_thinking(server):
    server.script(
        Reply(
            reasoning="Two reads needed.",
            tool_calls=[
                FakeCall("read_file", {"path": "src/app.py"}, call_id="toolu_a"),
                FakeCall("shell", {"command": "pytest -q"}, call_id="toolu_b"),
            ],
            chunk_size=3,
        )
    )
    events = await collect(make_client(server, "anthropic"), Prompt("", [items.user("go")], [SHELL, READ]))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Two reads needed."
    assert output_items(events) == [
        Reasoning("Two reads needed.", signature=encrypted_reasoning("Two reads needed.")),
        ToolCall("toolu_a", "read_file", json.dumps({"path": "src/app.py"})),
        ToolCall("toolu_b", "shell", json.dumps({"command": "pytest -q"})),
    ]


async def test_usage_counts_cache_reads_and_writes_as_input(server):
    server.script(
        Reply(
            text="ok",
            usage=FakeUsage(
                input_tokens=5000,
                cached_input_tokens=3000,
                cache_creation_input_tokens=1500,
                output_tokens=60,
                reasoning_tokens=10,
            ),
        )
    )
    events = await collect(make_client(server, "anthropic"), Prompt("", [items.user("q")]))
    assert completed(events).usage == Usage(
        input_tokens=5000, cached_input_tokens=3000, output_tokens=60, reasoning_tokens=10
    )


async def test_history_mapping_alternates_roles_with_cache_breakpoints(server):
    server.script(Reply(text="next"))
    history = [
        items.user("<environment_context>cwd</environment_context>"),
        items.developer("mode: agent"),
        items.user("fix it"),
        Reasoning("thinking", signature="SIG"),
        Reasoning("unsigned, from another provider", encrypted_content="ENC"),
        Message("assistant", "Checking."),
        ToolCall("toolu_1", "shell", '{"command": "ls"}'),
        ToolCall("toolu_2", "shell", "not json"),
        ToolOutput("toolu_1", "a.py"),
        ToolOutput("toolu_2", "bad arguments", success=False),
        items.user("and now?"),
    ]
    await collect(
        make_client(server, "anthropic", max_output_tokens=1000), Prompt("You are helpful.", history, [READ, SHELL])
    )
    body = server.requests[0].body
    assert body["max_tokens"] == 1000
    assert body["system"] == [{"type": "text", "text": "You are helpful.", "cache_control": CACHE}]
    assert body["tools"] == [
        {"name": "read_file", "description": "Read a file", "input_schema": READ.parameters},
        {"name": "shell", "description": "Run a command", "input_schema": SHELL.parameters, "cache_control": CACHE},
    ]
    assert body["messages"] == [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "<environment_context>cwd</environment_context>"},
                {"type": "text", "text": "mode: agent"},
                {"type": "text", "text": "fix it", "cache_control": CACHE},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "thinking", "signature": "SIG"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "toolu_1", "name": "shell", "input": {"command": "ls"}},
                {"type": "tool_use", "id": "toolu_2", "name": "shell", "input": {}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "toolu_1", "content": "a.py"},
                {"type": "tool_result", "tool_use_id": "toolu_2", "content": "bad arguments", "is_error": True},
                {"type": "text", "text": "and now?", "cache_control": CACHE},
            ],
        },
    ]
    breakpoints = json.dumps(body).count('"cache_control"')
    assert breakpoints <= 4


@pytest.mark.parametrize(
    "model, expected",
    [
        ("claude-sonnet-4-5-20250929", {"type": "enabled", "budget_tokens": 24_576}),
        ("claude-opus-4-6", {"type": "adaptive"}),
    ],
)
async def test_reasoning_effort_enables_thinking(server, model, expected):
    server.script(Reply(text="ok"))
    client = make_client(server, "anthropic", model=model, reasoning_effort="high")
    await collect(client, Prompt("", [items.user("q")]))
    body = server.requests[0].body
    assert body["thinking"] == expected
    if expected["type"] == "enabled":
        assert body["thinking"]["budget_tokens"] < body["max_tokens"]
    else:
        assert body["output_config"] == {"effort": "high"}
