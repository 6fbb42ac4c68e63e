"""The clients' own HTTP path (models/http_stream.py): what goes on the wire besides the body,
answers that are not streams, and round trips that never load a provider SDK."""

from __future__ import annotations

import pytest

from agent_cli import items
from agent_cli.models.base import Prompt
from agent_cli.models.errors import ModelError
from tests.conftest import provider_env, run_agent
from tests.fake_server import FakeModelServer, Reply, ToolCall
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
    assert headers["accept"] == "text/event-stream"
    if wire == "anthropic":
        assert headers["x-api-key"] == "test-key" and headers["anthropic-version"] == "2023-06-01"
        assert "authorization" not in headers and "openai-organization" not in headers
    else:
        assert headers["authorization"] == "Bearer test-key" and "x-api-key" not in headers
        assert headers["openai-organization"] == "org-123" and headers["openai-project"] == "proj-456"


@pytest.mark.parametrize("wire", WIRES)
async def test_an_answer_that_is_not_a_stream_is_a_clear_error_and_not_retried(wire):
    path = "/v1/messages" if wire == "anthropic" else {"chat": "/v1/chat/completions", "responses": "/v1/responses"}[wire]
    calls = []

    def json_answer(request):
        calls.append(request)
        return 200, {"id": "x", "note": "this server ignores stream: true"}

    with FakeModelServer(routes={("POST", path): json_answer}) as server:
        with pytest.raises(ModelError, match="application/json instead of an event stream.*ignores stream"):
            await collect(make_client(server, wire), PROMPT)
    assert len(calls) == 1


@pytest.mark.parametrize("provider", ["openai", "openai-chat", "anthropic"])
def test_an_exec_round_trip_loads_no_provider_sdk(provider, tmp_path):
    """Importing `openai` costs ~1 s of start-up and `anthropic` ~2.5 s: the clients speak HTTP
    themselves. A real `agent exec` run reports what it imported through -X importtime."""
    with FakeModelServer() as server:
        server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo ran"})]), Reply(text="done"))
        env = {**provider_env(server, provider), "PYTHONPROFILEIMPORTTIME": "1"}
        result = run_agent(["exec", "--provider", provider, "-m", "test-model", "run it"], cwd=tmp_path, env=env)
        assert len(server.requests) == 2
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "done"
    imported = {line.rsplit("|", 1)[-1].strip() for line in result.stderr.splitlines() if line.startswith("import time:")}
    assert any(name.startswith("httpx2.") for name in imported)  # the report is there: the clients' HTTP library
    assert not {name.split(".")[0] for name in imported} & {"openai", "anthropic", "pydantic"}
