"""Seeing compaction coming: the status bar's warning, /autocompact, and /compact show."""

from __future__ import annotations

from agent_cli.tui.widgets.notice_cell import NoticeCell
from tests.fake_server import Reply
from tests.tui.helpers import screen_text, wait_idle, wait_until

WIDE = (180, 36)
WARNING = "/compact now or /autocompact to change"


def status_text(app) -> str:
    return str(app.status.build_content())


async def test_the_status_bar_warns_near_the_threshold_and_autocompact_moves_it(make_app, server):
    server.script(Reply(text="a long answer " * 300))
    app = make_app("model_context_window=100000")
    async with app.run_test(size=WIDE) as pilot:
        app.send("talk")
        await wait_idle(pilot)
        used = app.session.context_tokens()
        assert WARNING not in status_text(app)  # far below 85% of the window

        app.send("/autocompact")
        await wait_until(pilot, lambda: bool(app.transcript.query(NoticeCell)), what="the threshold")
        assert (
            "Auto-compaction at 80,750 tokens (85% of the 95,000 usable)"
            in app.transcript.query(NoticeCell).last().text
        )

        app.send(f"/autocompact {used + 500}")  # the context is now above 80% of the threshold
        await wait_until(pilot, lambda: WARNING in status_text(app), what="the warning")
        percent = 100 * (used + 500) // 95_000
        assert f"compacting at {percent}%: {WARNING}" in status_text(app)
        assert WARNING in screen_text(app)
        assert app.session.auto_compact_limit == used + 500

        app.send("/autocompact off")
        await wait_until(pilot, lambda: WARNING not in status_text(app), what="the warning to go")
        assert app.session.auto_compact_limit is None
        assert "Auto-compaction is off" in app.transcript.query(NoticeCell).last().text

        app.send("/autocompact 50%")
        await wait_idle(pilot)
        assert app.session.auto_compact_limit == 95_000 * 50 // 100
        app.send("/autocompact lots")
        await wait_idle(pilot)
        error = app.transcript.query(NoticeCell).last()
        assert error.kind == "error" and "/autocompact [PERCENT" in error.text
    assert len(server.requests) == 1  # none of this talks to the model


async def test_compact_show_after_a_compaction(make_app, server):
    server.script(Reply(text="a long answer " * 200), Reply(text="SUMMARY: the user asked for a long answer."))
    app = make_app("model_context_window=100000")
    async with app.run_test(size=WIDE) as pilot:
        app.send("talk")
        await wait_idle(pilot)
        app.send("/compact")
        await wait_idle(pilot)
        app.send("/compact show")
        await wait_until(
            pilot, lambda: "works from" in app.transcript.query(NoticeCell).last().text, what="the summary"
        )
        text = app.transcript.query(NoticeCell).last().text
        assert "SUMMARY: the user asked for a long answer." in text
        assert "Messages:" in text and "assistant: a long answer" in text
    assert len(server.requests) == 2
