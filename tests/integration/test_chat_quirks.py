"""Quirks of local OpenAI-compatible servers, against the fake server over HTTP."""

from __future__ import annotations

import json

import pytest

from agent_cli import items
from agent_cli.items import Message, Reasoning, ToolCall
from agent_cli.models.base import ClientNotice, Prompt, ReasoningDelta
from agent_cli.models.errors import ModelError
from tests.fake_server import Reply
from tests.integration.model_client_helpers import SHELL, collect, make_client, output_items, retries, text_deltas

PROMPT = Prompt("sys", [items.user("list the files")], [SHELL])

pytestmark = pytest.mark.usefixtures("script_used_up")  # every test uses up its script


@pytest.mark.parametrize(
    "content",
    [
        'I will list them.\n<tool_call>\n{"name": "shell", "arguments": {"command": "ls"}}\n</tool_call>',  # Hermes, Qwen
        'I will list them.[TOOL_CALLS][{"name": "shell", "arguments": {"command": "ls"}}]',  # Mistral
        'I will list them.<|python_tag|>{"name": "shell", "parameters": {"command": "ls"}}',  # Llama 3
    ],
)
async def test_tool_calls_written_as_text_become_real_calls(server, content):
    server.script(Reply(text=content, chunk_size=5))
    events = await collect(make_client(server, "chat"), PROMPT)
    out = output_items(events)
    assert [type(item) for item in out] == [Message, ToolCall]
    assert out[0].text.strip() == "I will list them."
    assert (out[1].name, json.loads(out[1].arguments)) == ("shell", {"command": "ls"})
    assert "{" not in text_deltas(events)  # the markup was never shown as answer text


async def test_think_tags_are_reasoning_not_answer_and_not_sent_back(server):
    server.script(Reply(text="<think>The user wants a greeting.</think>\n\nHello!", chunk_size=4), Reply(text="ok"))
    client = make_client(server, "chat")
    events = await collect(client, Prompt("", [items.user("hi")]))
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "The user wants a greeting."
    assert text_deltas(events) == "Hello!"
    out = output_items(events)
    assert out == [Reasoning("The user wants a greeting."), Message("assistant", "Hello!")]
    await collect(client, Prompt("", [items.user("hi"), *out, items.user("again")]))
    sent = json.dumps(server.requests[1].body["messages"])
    assert "greeting" not in sent and "Hello!" in sent


async def test_server_without_tool_support_gets_one_clear_message_and_a_text_answer(server):
    no_tools = Reply.http_error(400, message="registry.ollama.ai/library/gemma2:2b does not support tools")
    server.script(no_tools, Reply(text="I can only answer in text."), Reply(text="still text"))
    client = make_client(server, "chat", model="gemma2:2b")
    events = await collect(client, PROMPT)
    notices = [e for e in events if isinstance(e, ClientNotice)]
    assert len(notices) == 1 and "gemma2:2b" in notices[0].message and "qwen2.5-coder" in notices[0].message
    assert output_items(events) == [Message("assistant", "I can only answer in text.")]
    assert "tools" in server.requests[0].body and "tools" not in server.requests[1].body
    events = await collect(client, PROMPT)  # remembered: no second refusal, no second message
    assert not [e for e in events if isinstance(e, ClientNotice)] and "tools" not in server.requests[2].body


async def test_stream_options_rejected_once_then_remembered(server):
    rejected = Reply.http_error(400, message="1 validation error: stream_options: Extra inputs are not permitted")
    server.script(rejected, Reply(text="first"), Reply(text="second"))
    client = make_client(server, "chat")
    assert output_items(await collect(client, PROMPT)) == [Message("assistant", "first")]
    assert output_items(await collect(client, PROMPT)) == [Message("assistant", "second")]
    assert [("stream_options" in rec.body) for rec in server.requests] == [True, False, False]


async def test_an_empty_stream_is_retried_once(server):
    server.script(Reply.empty(), Reply(text="there you go"))
    events = await collect(make_client(server, "chat"), PROMPT)
    assert len(retries(events)) == 1 and "empty response" in retries(events)[0].reason
    assert output_items(events) == [Message("assistant", "there you go")]


async def test_a_server_that_keeps_dropping_the_stream_gets_a_clear_error(server):
    server.script(Reply.empty(), Reply.empty())
    seen: list = []
    with pytest.raises(ModelError) as raised:
        await collect(make_client(server, "chat"), PROMPT, seen)
    message = str(raised.value)
    assert server.openai_base_url in message and "qwen3:8b" in message and "twice" in message
    assert len(retries(seen)) == 1 and len(server.requests) == 2
