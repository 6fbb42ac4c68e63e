"""``/export`` in the TUI: without a file the conversation goes to the clipboard as Markdown."""

from __future__ import annotations

from agent_cli.tui.widgets.notice_cell import NoticeCell
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import wait_idle, wait_until


async def test_export_copies_the_conversation(make_app, server):
    server.script(Reply(text="the answer"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("the question")
        await wait_idle(pilot)
        app.send("/export")
        await wait_until(pilot, lambda: app.clipboard.startswith("# Conversation"), what="the clipboard")
        assert "## You\n\nthe question\n\n## Agent\n\nthe answer\n" in app.clipboard
        await wait_until(pilot, lambda: "copied the conversation" in app.transcript.query(NoticeCell).last().text)
