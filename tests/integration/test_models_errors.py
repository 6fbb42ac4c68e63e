"""Retries and error mapping, the same for every wire, over real HTTP."""

from __future__ import annotations

import socket

import pytest

from agent_cli import items
from agent_cli.items import Message, ToolCall
from agent_cli.models.base import Completed, OutputItem, Prompt, Retrying, TextDelta
from agent_cli.models.errors import ContextWindowExceeded, ModelError
from agent_cli.models.registry import BUILTIN_PROVIDERS, create_client
from agent_cli.models.retry import RetryPolicy
from tests.fake_server import FakeModelServer, Reply
from tests.fake_server import ToolCall as FakeCall
from tests.integration.model_client_helpers import (
    PROVIDER_FOR,
    WIRES,
    collect,
    completed,
    make_client,
    output_items,
    retries,
    text_deltas,
)

PROMPT = Prompt("sys", [items.user("hello")])
ENV_KEY = {"responses": "OPENAI_API_KEY", "chat": "OPENAI_API_KEY", "anthropic": "ANTHROPIC_API_KEY"}
# Events after which a cut leaves the first output item finished but the response not terminated.
LATE_CUT = {
    "responses": 9,
    "chat": 4,
    "anthropic": 6,
}  # anthropic: before message_delta (after it, the answer is whole)

pytestmark = [
    pytest.mark.parametrize("wire", WIRES),
    pytest.mark.usefixtures("script_used_up"),
]  # every test uses up its script


async def test_429_honours_retry_after_then_succeeds(server, wire):
    server.script(Reply.http_error(429, retry_after="0.05"), Reply(text="after the wait"))
    events = await collect(make_client(server, wire), PROMPT)
    [retry] = retries(events)
    assert (retry.attempt, retry.max_attempts, retry.delay) == (1, 3, 0.05)
    assert "429" in retry.reason
    assert output_items(events) == [Message("assistant", "after the wait", id=output_items(events)[0].id)]
    completed(events)


async def test_500_then_success(server, wire):
    server.script(Reply.http_error(500), Reply(text="recovered"))
    events = await collect(make_client(server, wire), PROMPT)
    assert len(retries(events)) == 1 and "500" in retries(events)[0].reason
    assert [i.text for i in output_items(events)] == ["recovered"]
    assert len(server.requests) == 2


async def test_cut_stream_is_retried_without_duplicate_items(server, wire):
    server.script(
        Reply.cut(text="partial text", after_events=LATE_CUT[wire]),
        Reply(text="complete answer", tool_calls=[FakeCall("shell", {"command": "ls"})]),
    )
    events = await collect(make_client(server, wire), PROMPT)
    first_retry = events.index(retries(events)[0])
    abandoned = "".join(e.text for e in events[:first_retry] if isinstance(e, TextDelta))
    assert abandoned == "partial text"  # deltas were streamed before the cut was noticed
    assert not any(isinstance(e, (OutputItem, Completed)) for e in events[:first_retry])
    got = output_items(events)
    assert [type(i) for i in got] == [Message, ToolCall]
    assert got[0].text == "complete answer" == text_deltas(events)
    completed(events)


async def test_error_reported_mid_stream_is_retried(server, wire):
    server.script(Reply.stream_error("Overloaded", after_events=3), Reply(text="fine now"))
    events = await collect(make_client(server, wire), PROMPT)
    assert "Overloaded" in retries(events)[0].reason
    assert [i.text for i in output_items(events)] == ["fine now"]


async def test_retries_exhausted_raise_one_line_model_error(server, wire):
    server.script(*[Reply.http_error(503)] * 3)
    events = []
    with pytest.raises(ModelError) as caught:
        await collect(make_client(server, wire), PROMPT, into=events)
    assert not isinstance(caught.value, ContextWindowExceeded)
    message = str(caught.value)
    assert "503" in message and "gave up after 3 attempts" in message and "\n" not in message
    assert [e.attempt for e in events if isinstance(e, Retrying)] == [1, 2]
    assert len(server.requests) == 3


async def test_context_length_error_is_not_retried(server, wire):
    server.script(Reply.context_length_exceeded())
    with pytest.raises(ContextWindowExceeded):
        await collect(make_client(server, wire), PROMPT)
    assert len(server.requests) == 1


async def test_context_window_of_the_server(wire):
    with FakeModelServer(context_window=10) as server:
        with pytest.raises(ContextWindowExceeded):
            await collect(make_client(server, wire), PROMPT)
        assert server.requests[0].overflowed


async def test_401_names_the_env_var(server, wire):
    server.script(Reply.http_error(401))
    with pytest.raises(ModelError) as caught:
        await collect(make_client(server, wire), PROMPT)
    assert str(caught.value).startswith("authentication failed for provider ")
    assert f"(HTTP 401): check {ENV_KEY[wire]}" in str(caught.value)
    assert len(server.requests) == 1


async def test_404_names_model_provider_and_url(server, wire):
    server.script(Reply.http_error(404))
    client = make_client(server, wire, model="no-such-model")
    with pytest.raises(ModelError) as caught:
        await collect(client, PROMPT)
    url = server.base_url if wire == "anthropic" else server.openai_base_url
    assert f"model 'no-such-model' was not found by provider {client.provider} at {url}" in str(caught.value)


async def test_other_4xx_carries_the_server_message(server, wire):
    server.script(Reply.http_error(400, message="tools[0].name: String should match pattern"))
    with pytest.raises(ModelError, match=r"HTTP 400\): tools\[0\].name: String should match pattern"):
        await collect(make_client(server, wire), PROMPT)
    assert len(server.requests) == 1


async def test_connection_refused_is_retried_then_reported(wire):
    with socket.socket() as sock:  # a port nothing listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    provider_id, model = PROVIDER_FOR[wire]
    client = create_client(
        BUILTIN_PROVIDERS[provider_id],
        model,
        api_key="k",
        base_url=f"http://127.0.0.1:{port}/v1",
        retry=RetryPolicy(max_attempts=2, base_delay=0.001),
    )
    events = []
    with pytest.raises(ModelError, match="gave up after 2 attempts") as caught:
        await collect(client, PROMPT, into=events)
    assert "connection" in str(caught.value).lower()
    assert len(retries(events)) == 1
