"""MCP elicitation through `agent acp`: an editor that announces the form capability answers the
server's question (the ACP library's own client over real pipes, the OAuth test server signed in
beforehand); one that does not has it declined."""

from __future__ import annotations

import asyncio
import sys

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AcceptElicitationResponse,
    ClientCapabilities,
    ElicitationCapabilities,
    ElicitationFormCapabilities,
    HttpMcpServer,
    Implementation,
)

from agent_cli.mcp import oauth
from agent_cli.mcp.config import ServerSpec
from tests.fake_server import Reply, ToolCall
from tests.integration.test_acp import EDITOR_CLOSES, RecordingClient, agent_env
from tests.integration.test_mcp_oauth import BROWSER
from tests.mcp_servers.oauth_server import serve_oauth

pytestmark = pytest.mark.timeout(120)


class FormClient(RecordingClient):
    def __init__(self):
        super().__init__()
        self.questions: list = []

    async def create_elicitation(self, message, mode, **_):
        self.questions.append((message, mode))
        return AcceptElicitationResponse(action="accept", content={"name": "Dana", "count": 2})


@pytest.fixture
def signed_in(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.setenv("TEST_BROWSER_LOG", str(tmp_path / "browser.log"))
    with serve_oauth() as (url, _provider):
        asyncio.run(oauth.login(ServerSpec("sec", "http", "test", url=url), lambda line: None))
        yield url


async def ask_once(client, server, tmp_path, url, capabilities) -> str:
    server.script(Reply(tool_calls=[ToolCall("mcp__sec__ask", {}, "a")]), Reply(text="done"))
    # elicitation is in ACP's unstable part: an editor that shows it opts in to that
    command = [sys.executable, "-m", "agent_cli", "acp", "-m", "test-model"]
    async with spawn_agent_process(
        client,
        *command,
        env=agent_env(server),
        cwd=str(tmp_path),
        transport_kwargs=EDITOR_CLOSES,
        use_unstable_protocol=True,
    ) as (conn, _process):
        await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=capabilities,
            client_info=Implementation(name="test-editor", version="1"),
        )
        session = await conn.new_session(
            cwd=str(tmp_path), mcp_servers=[HttpMcpServer(type="http", name="sec", url=url, headers=[])]
        )
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("ask")])
        assert reply.stop_reason == "end_turn"
    items = server.requests[-1].body["input"]  # the Responses API: the call's output is an input item
    return next(item["output"] for item in items if item.get("call_id") == "a" and "output" in item)


async def test_an_editor_with_forms_answers_and_one_without_declines(server, tmp_path, signed_in):
    client = FormClient()
    forms = ClientCapabilities(elicitation=ElicitationCapabilities(form=ElicitationFormCapabilities()))
    assert await ask_once(client, server, tmp_path, signed_in, forms) == "hello Dana x2"
    [(message, mode)] = client.questions
    assert message == "Who should be greeted?" and set(mode.requested_schema.properties) == {"name", "count"}

    plain = FormClient()
    assert await ask_once(plain, server, tmp_path, signed_in, ClientCapabilities()) == "no answer (decline)"
    assert plain.questions == []
