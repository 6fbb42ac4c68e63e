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


async def test_export_to_a_file_outside_the_sandbox_asks_first(make_app, server, tmp_path):
    """Issue 45: `/export FILE` outside the working folder's sandbox is asked about as a patch
    writing it would be; Esc (no), and nothing is written."""
    import shutil
    import tempfile
    from pathlib import Path

    from agent_cli.tui.screens.approval import ApprovalScreen

    outside = Path(tempfile.mkdtemp(prefix="agent-outside-", dir="/var/tmp"))
    try:
        server.script(Reply(text="the answer"))
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            app.send("the question")
            await wait_idle(pilot)
            app.send(f"/export {outside / 'out.md'}")
            await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
            await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
            assert str(outside / "out.md") in app.screen.request.summary
            await pilot.press("escape")
            await wait_idle(pilot)
        assert not (outside / "out.md").exists()
    finally:
        shutil.rmtree(outside, ignore_errors=True)
