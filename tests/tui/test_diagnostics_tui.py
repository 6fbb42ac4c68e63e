"""Diagnostics in the TUI: a language server's new problems under the edit's cell, the lint/test
run as a notice, their counts in the status bar (ruff's server, from the `test` extra)."""

from __future__ import annotations

import shutil

import pytest

from agent_cli.tui.widgets.notice_cell import NoticeCell
from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle

PATCH = "*** Begin Patch\n*** Update File: src/main.py\n@@\n print('hi')\n+print(not_defined_here)\n*** End Patch"


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (the `test` extra installs it)")
async def test_new_problems_show_under_the_edit_and_in_the_status_bar(make_app, server):
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": PATCH})]), Reply(text="done"))
    app = make_app("lsp_wait_ms=60000", "lsp.ruff.disabled=false", 'test_command="exit 0"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "edit main")
        await pilot.press("enter")
        await wait_idle(pilot, timeout=60)
        cells = list(app.transcript.children)
        edit = next(i for i, cell in enumerate(cells) if isinstance(cell, ToolCell))
        notice = cells[edit + 1]
        assert isinstance(notice, NoticeCell) and notice.title == "new problems (ruff)"
        assert "src/main.py:2:7: error: Undefined name `not_defined_here` [F821]" in notice.text
        test_run = next(cell for cell in cells if isinstance(cell, NoticeCell) and cell.title == "test")
        assert "`exit 0` passed" in test_run.text
        status = str(app.status.build_content(200))
        assert "✗ 1 ⚠ 0" in status and "test ✓" in status
