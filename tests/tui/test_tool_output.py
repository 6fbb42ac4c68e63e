"""Shell cells show the command's real output: the live view marks its gaps, the finished cell shows the result (issue 28, bug 3)."""

from __future__ import annotations

import re

from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until

# The pauses leave the live view time to be read while the command runs, also on a loaded machine.
BURSTS = 'for b in 1 2 3; do seq -f "burst$b-line-%06g-xxxxxxxx" 1 1500; sleep 1.5; done'
LINE = re.compile(r"^burst([123])-line-(\d{6})-xxxxxxxx$")


async def run_bursts(make_app, server, pilot_body) -> None:
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": BURSTS})]), Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "print the bursts")
        await pilot.press("enter")
        await pilot_body(app, pilot)


async def test_a_finished_cell_shows_the_result_not_the_live_leftovers(make_app, server):
    seen_live: list[str] = []

    async def body(app, pilot):
        await wait_until(pilot, lambda: app.transcript.query(ToolCell), what="the cell")
        cell = app.transcript.query_one(ToolCell)
        await wait_until(pilot, lambda: "burst2" in "".join(cell.live), timeout=30, what="live output")
        seen_live.append("".join(cell.live))
        await wait_idle(pilot, timeout=30)
        preview = [line.strip() for line in str(cell.render()).splitlines()[1:]]
        assert preview[:3] == [f"burst1-line-{n:06d}-xxxxxxxx" for n in (1, 2, 3)]
        assert preview[4:7] == [f"burst3-line-{n:06d}-xxxxxxxx" for n in (1498, 1499, 1500)]
        assert preview[3] == "… 4,494 more lines (enter or click to expand)"
        assert preview[7].startswith("4,500 lines in all · full output in ") and preview[7].endswith(".log")
        cell.expanded = True
        await pilot.pause(0.1)
        for line in str(cell.render()).splitlines()[1:]:  # whole lines of the real output, or a marker
            line = line.strip()
            assert LINE.match(line) or "omitted" in line or "lines in all" in line or "truncated" in line, line

    await run_bursts(make_app, server, body)
    live = seen_live[0]
    assert "not shown …" in live  # the live view said where it skipped (each burst is 40 KB, over 16 KB a delta)
    whole = live.splitlines() if live.endswith("\n") else live.splitlines()[:-1]  # the last line may be arriving
    for line in whole:
        assert LINE.match(line) or line.endswith(" not shown …"), line  # never a spliced line
