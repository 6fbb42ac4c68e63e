"""/mcp with an OAuth server in the app: its login state, /mcp login (the scripted browser signs
in, the server reconnects and its tools are offered) and /mcp logout."""

from __future__ import annotations

import pytest

from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply, ToolCall
from tests.integration.test_mcp_oauth import BROWSER
from tests.mcp_servers.oauth_server import serve_oauth
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until


@pytest.fixture
def oauth_url(monkeypatch, tmp_path):
    monkeypatch.setenv("BROWSER", BROWSER)
    monkeypatch.setenv("TEST_BROWSER_LOG", str(tmp_path / "browser.log"))
    monkeypatch.setenv("TEST_BROWSER_USER", "carol")
    with serve_oauth() as (url, provider):
        yield url, provider


def notices(app) -> str:
    return "\n".join(str(widget.render()) for widget in app.transcript.children)


async def run_command(pilot, text: str) -> None:
    app = pilot.app
    app.composer.clear()
    await type_text(pilot, text)
    await pilot.press("enter")


async def test_mcp_login_and_logout_from_the_tui(make_app, server, oauth_url, isolated_home):
    url, provider = oauth_url
    app = make_app(f'mcp_servers.sec={{ url = "{url}", startup_timeout_sec = 30 }}')
    connection = app.session.mcp.manager.connections["sec"]
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: connection.status == "failed", 60, "the server to need a login")
        await run_command(pilot, "/mcp")
        await wait_until(pilot, lambda: "needs a login" in notices(app), 20, "/mcp to show the login state")
        assert "/mcp login NAME" in notices(app)

        await run_command(pilot, "/mcp login sec")
        await wait_until(pilot, lambda: "logged in to sec (ready, 4 tools)" in notices(app), 60, "the login")
        assert "/authorize?" in notices(app)  # the URL is shown too
        assert provider.logins == 1

        server.script(Reply(tool_calls=[ToolCall("mcp__sec__whoami", {})]), Reply(text="ok"))
        await run_command(pilot, "who am I")
        await wait_idle(pilot, 60)
        (cell,) = app.transcript.query(ToolCell)
        assert cell.result.output == "signed in as carol"

        await run_command(pilot, "/mcp")
        await wait_until(pilot, lambda: "ready · logged in" in notices(app), 20, "/mcp to show logged in")
        await run_command(pilot, "/mcp logout sec")
        await wait_until(pilot, lambda: "logged out of sec" in notices(app), 30, "the logout")
        assert connection.status == "failed" and connection.needs_login
        # the next turn goes without its tools, and the model is told they went away
        server.script(Reply(text="ok"))
        await run_command(pilot, "anything else?")
        await wait_idle(pilot, 60)
        request = server.requests[-1]
        assert not any(t["function"]["name"].startswith("mcp__sec") for t in request.body["tools"])
        note = request.body["messages"][-1]["content"]
        assert "Removed: mcp__sec__ask, mcp__sec__grow, mcp__sec__visit, mcp__sec__whoami" in note
