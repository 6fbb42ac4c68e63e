"""/resume shows an applied patch as its diff and keeps the session's token totals (issue 28, bug 7)."""

from __future__ import annotations

from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from agent_cli.tui.app import AgentApp
from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply, ToolCall, Usage
from tests.tui.conftest import SIZE
from tests.tui.helpers import wait_idle

PATCH = "*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# demo, patched\n*** End Patch\n"


async def test_a_resumed_patch_shows_its_diff_and_the_totals_carry_on(make_app, make_config, server, repo):
    server.script(
        Reply(tool_calls=[ToolCall("apply_patch", {"patch": PATCH})], usage=Usage(input_tokens=5000, output_tokens=40)),
        Reply(text="patched", usage=Usage(input_tokens=5200, output_tokens=10)),
    )
    first = make_app()
    async with first.run_test(size=SIZE) as pilot:
        first.send("patch the readme")
        await wait_idle(pilot)
        live_line = str(first.status.build_content())
    assert "session ↑10k ↓50" in live_line
    assert (repo / "README.md").read_text() == "# demo, patched\n"

    config = make_config()
    second = AgentApp(config, session=restore(open_session(config, interactive=True), first.session.rollout.path))
    async with second.run_test(size=SIZE) as pilot:
        await pilot.pause()
        cell = second.transcript.query_one(ToolCell)
        shown = str(cell.render())
        assert "-# demo" in shown and "+# demo, patched" in shown and "README.md" in shown
        assert "session ↑10k ↓50" in str(second.status.build_content())
