"""The app with an MCP server: the starting/ready indicator, tool cells as server.tool, resource completion."""

from __future__ import annotations

import json

from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.conftest import REPO
from tests.fake_server import Reply, ToolCall
from tests.integration.test_mcp_session import DEMO, alive
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until


async def test_servers_start_in_the_background_and_calls_show_as_server_tool(make_app, server):
    server.script(Reply(tool_calls=[ToolCall("mcp__demo__pid", {})]), Reply(text="ok"))
    table = f"command = {json.dumps(DEMO[0])}, args = {json.dumps(DEMO[1:])}, cwd = {json.dumps(str(REPO))}"
    app = make_app(f"mcp_servers.demo={{ {table}, startup_timeout_sec = 60 }}")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: "starting demo" in str(app.mcp_indicator.render()), 30, "the indicator")
        assert app.composer.has_focus  # usable while servers start
        await wait_until(pilot, lambda: str(app.mcp_indicator.render()) == "MCP 1 ready", 60, "the server")
        await type_text(pilot, "@demo:")
        await wait_until(pilot, lambda: any("demo:demo://notes" in c.value for c in app.menu.items), 10, "completion")
        app.composer.clear()
        await type_text(pilot, "who are you")
        await pilot.press("enter")
        await wait_idle(pilot, 60)
        (cell,) = app.transcript.query(ToolCell)
        assert "demo.pid" in str(cell.render()) and cell.result.success
        pid = int(cell.result.output)
    assert not alive(pid)  # closing the app closed the server
