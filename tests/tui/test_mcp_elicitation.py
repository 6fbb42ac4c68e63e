"""An MCP server's elicitation in the app: the form of its schema (validated), answered, declined
and cancelled; URL mode opens the browser only once accepted. The server is the OAuth test server,
signed in beforehand by the scripted browser."""

from __future__ import annotations

import asyncio

import pytest
from textual.widgets import Input

from agent_cli.mcp import oauth
from agent_cli.mcp.config import ServerSpec
from agent_cli.tui.screens.elicitation import ElicitationScreen
from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply, ToolCall
from tests.integration.test_mcp_oauth import BROWSER
from tests.mcp_servers.oauth_server import serve_oauth
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until


@pytest.fixture
def signed_in(monkeypatch, tmp_path):
    """The server's URL, already logged in (as the user would with `agent mcp login`), and the browser's log."""
    log = tmp_path / "browser.log"
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.setenv("TEST_BROWSER_LOG", str(log))
    with serve_oauth() as (url, provider):
        asyncio.run(oauth.login(ServerSpec("sec", "http", "test", url=url), lambda line: None))
        yield url, log


async def call(pilot, server, tool: str, call_id: str) -> None:
    server.script(Reply(tool_calls=[ToolCall(f"mcp__sec__{tool}", {}, call_id)]), Reply(text="ok"))
    pilot.app.composer.clear()
    await type_text(pilot, f"use {tool}")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(pilot.app.screen, ElicitationScreen), 60, "the form")


def output(app, call_id: str) -> str:
    return next(cell.result.output for cell in app.transcript.query(ToolCell) if cell.call_id == call_id)


async def test_a_form_answered_declined_and_cancelled_and_a_url_opened(make_app, server, signed_in):
    url, log = signed_in
    app = make_app(f'mcp_servers.sec={{ url = "{url}", startup_timeout_sec = 30 }}')
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: str(app.mcp_indicator.render()) == "MCP 1 ready", 60, "the server")

        await call(pilot, server, "ask", "a1")
        form = app.screen
        assert "Who should be greeted?" in str(form.query_one("#message").render())
        name, count = form.query(Input)
        assert count.value == "1"  # the schema's default
        await pilot.press("enter")  # the required name is missing: the form stays, saying so
        await pilot.pause(0.1)
        assert app.screen is form and "required" in str(form.query_one("#error-0").render())
        await type_text(pilot, "Bob")
        count.value = "3"
        await pilot.press("ctrl+s")
        await wait_idle(pilot, 60)
        assert output(app, "a1") == "hello Bob x3"

        await call(pilot, server, "ask", "a2")
        await pilot.press("ctrl+n")
        await wait_idle(pilot, 60)
        assert output(app, "a2") == "no answer (decline)"

        await call(pilot, server, "ask", "a3")
        await pilot.press("escape")
        await wait_idle(pilot, 60)
        assert output(app, "a3") == "no answer (cancel)"

        logins = log.read_text().splitlines()
        await call(pilot, server, "visit", "v1")
        assert f"{url.removesuffix('/mcp')}/confirm" in str(app.screen.query_one(".note").render())
        assert log.read_text().splitlines() == logins  # not before the user says so
        await pilot.press("ctrl+s")
        await wait_idle(pilot, 60)
        assert output(app, "v1") == "visit: accept"
        await wait_until(pilot, lambda: log.read_text().splitlines()[-1].endswith("/confirm"), 30, "the browser")
