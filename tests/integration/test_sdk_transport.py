"""What the SDK clients put on the wire besides the body (models/sdk_clients.py), and answers
that are not streams."""

from __future__ import annotations

import pytest

from agent_cli import items
from agent_cli.models.base import Prompt
from agent_cli.models.errors import ModelError
from tests.fake_server import FakeModelServer, Reply
from tests.integration.model_client_helpers import WIRES, collect, make_client, output_items

PROMPT = Prompt("sys", [items.user("hello")])


@pytest.mark.parametrize("wire", WIRES)
async def test_each_wire_sends_its_providers_headers(wire, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-123")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-456")
    with FakeModelServer() as server:
        server.script(Reply(text="hi"))
        assert [m.text for m in output_items(await collect(make_client(server, wire), PROMPT))] == ["hi"]
        headers = server.requests[0].headers
    assert headers["user-agent"].startswith("agent-cli/")
    assert headers["content-type"] == "application/json"
    if wire == "anthropic":
        # the SDK's way of sending the key (Authorization in this SDK generation, x-api-key before)
        assert "test-key" in (headers.get("x-api-key"), headers.get("authorization", "").removeprefix("Bearer "))
        assert headers["anthropic-version"] and "openai-organization" not in headers
    else:
        assert headers["authorization"] == "Bearer test-key" and "x-api-key" not in headers
        assert headers["openai-organization"] == "org-123" and headers["openai-project"] == "proj-456"


@pytest.mark.parametrize("wire", WIRES)
async def test_an_answer_that_is_not_a_stream_is_a_clear_error_and_not_retried(wire):
    path = (
        "/v1/messages" if wire == "anthropic" else {"chat": "/v1/chat/completions", "responses": "/v1/responses"}[wire]
    )
    calls = []

    def json_answer(request):
        calls.append(request)
        return 200, {"id": "x", "note": "this server ignores stream: true"}

    with FakeModelServer(routes={("POST", path): json_answer}) as server:
        with pytest.raises(ModelError, match="application/json instead of an event stream.*ignores stream"):
            await collect(make_client(server, wire), PROMPT)
    assert len(calls) == 1


@pytest.mark.parametrize("wire", WIRES)
async def test_an_error_names_the_providers_request_id(wire):
    with FakeModelServer() as server:
        server.script(Reply.http_error(400, message="bad field"))
        with pytest.raises(ModelError, match=r"bad field.*\[request id req_\w+\]") as raised:
            await collect(make_client(server, wire), PROMPT)
    assert raised.value.request_id.startswith("req_")


@pytest.mark.parametrize("wire", WIRES)
async def test_completed_carries_the_request_id(wire):
    with FakeModelServer() as server:
        server.script(Reply(text="hi"))
        events = await collect(make_client(server, wire), PROMPT)
    assert events[-1].request_id.startswith("req_")
