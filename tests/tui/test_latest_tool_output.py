"""Ctrl+O expands the newest tool output; Tab starts at the newest tool cell (issue 35, item 10)."""

from __future__ import annotations

from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, wait_idle

SETTINGS = ('approval_policy="never"', 'sandbox_mode="danger-full-access"')


async def two_tool_turns(app, pilot, server) -> list[ToolCell]:
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "seq 1 40"})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "seq 100 160"})]),
        Reply(text="done"),
    )
    app.send("count")
    await wait_idle(pilot)
    return list(app.transcript.query(ToolCell))


async def test_ctrl_o_expands_the_newest_tool_output(make_app, server):
    app = make_app(*SETTINGS)
    async with app.run_test(size=(100, 60)) as pilot:
        older, newest = await two_tool_turns(app, pilot, server)
        assert "130" not in screen_text(app)  # in the middle of the newest output: folded
        await pilot.press("ctrl+o")
        await pilot.pause(0.1)
        assert newest.expanded and not older.expanded
        assert "130" in screen_text(app)
        await pilot.press("ctrl+o")
        assert not newest.expanded


async def test_tab_starts_at_the_newest_tool_cell(make_app, server):
    app = make_app(*SETTINGS)
    async with app.run_test(size=SIZE) as pilot:
        older, newest = await two_tool_turns(app, pilot, server)
        await pilot.press("tab")
        assert app.focused is newest
        await pilot.press("tab")
        assert app.focused is older
        await pilot.press("tab")
        assert app.focused is app.composer
