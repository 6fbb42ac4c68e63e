"""An MCP server's question (elicitation) reaches the client of `agent app-server` as Codex's
``mcpServer/elicitation/request``, and the answer goes back to the server's tool: the OAuth test
server (signed in beforehand) asks for a name and a count, the client accepts with its values."""

from __future__ import annotations

import asyncio

import pytest

from agent_cli.app_server.client import AppServerClient, thread_text
from agent_cli.mcp import oauth
from agent_cli.mcp.config import ServerSpec
from tests.app_server_helpers import AppServers
from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall
from tests.integration.test_mcp_oauth import BROWSER
from tests.mcp_servers.oauth_server import serve_oauth

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def signed_in(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.setenv("TEST_BROWSER_LOG", str(tmp_path / "browser.log"))
    with serve_oauth() as (url, _provider):
        asyncio.run(oauth.login(ServerSpec("sec", "http", "test", url=url), lambda line: None))
        yield url


def test_an_mcp_question_is_asked_of_the_client_and_its_answer_reaches_the_tool(
    server, tmp_path, signed_in, isolated_home
):
    (isolated_home / "config.toml").write_text(f'[mcp_servers.sec]\nurl = "{signed_in}"\n')
    server.script(Reply(tool_calls=[ToolCall("mcp__sec__ask", {}, "a")]), Reply(text="greeted"))
    repo = git_init(tmp_path / "repo")
    with AppServers(server, tmp_path) as servers:
        running = servers.start(repo, "--listen", "unix://", "-a", "never")
        asyncio.run(ask(running.url, repo))
    outputs = [m for m in server.requests[-1].body["messages"] if m.get("role") == "tool"]
    assert outputs[-1]["content"] == "hello Dana x2"


async def ask(url: str, repo) -> None:
    client = await AppServerClient.connect(url)
    await client.initialize()
    thread = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]
    await client.request("turn/start", {"threadId": thread["id"], "input": thread_text("ask")})
    question = await client.server_request()
    assert question.method == "mcpServer/elicitation/request"
    assert question.params["serverName"] == "sec" and question.params["mode"] == "form"
    assert question.params["message"] == "Who should be greeted?"
    assert set(question.params["requestedSchema"]["properties"]) == {"name", "count"}
    await client.respond(question, {"action": "accept", "content": {"name": "Dana", "count": 2}})
    assert (await client.notification("serverRequest/resolved"))["threadId"] == thread["id"]
    assert (await client.notification("turn/completed"))["turn"]["status"] == "completed"
    await client.close()
