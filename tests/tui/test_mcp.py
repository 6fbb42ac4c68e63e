"""The app with an MCP server: the starting/ready indicator, tool cells as server.tool, resource completion."""

from __future__ import annotations

import json

from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.conftest import REPO
from tests.fake_server import Reply, ToolCall
from tests.integration.test_mcp_session import DEMO
from tests.processes import alive
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


async def test_the_first_count_agrees_with_context_once_the_servers_are_ready(make_app, server):
    from agent_cli.commands.context_usage import context_usage

    table = f"command = {json.dumps(DEMO[0])}, args = {json.dumps([*DEMO[1:], '--start-delay', '1'])}, cwd = {json.dumps(str(REPO))}"
    app = make_app(f"mcp_servers.demo={{ {table}, startup_timeout_sec = 60 }}")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: str(app.mcp_indicator.render()) == "MCP 1 ready", 60, "the server")
        usage = context_usage(app.session)
        assert {part.name: part.tokens for part in usage.parts}["MCP tools"] > 100
        await wait_until(
            pilot,
            lambda: app.status.count is not None and app.status.count.context_used == usage.used,
            10,
            f"the status bar to count {usage.used} tokens, as /context does",
        )
    assert server.requests == []  # counted before any request
