"""A long paste shows as `[Pasted text #N +L lines]` and is sent whole (issue 35, item 11)."""

from __future__ import annotations

from textual import events

from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

PASTE = "\n".join(f"log line {n}" for n in range(1, 165))


async def test_a_long_paste_is_folded_and_sent_whole(make_app, server):
    server.script(Reply(text="read it"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "why does this fail: ")
        app.post_message(events.Paste(PASTE))  # as a terminal pastes
        await wait_until(pilot, lambda: "Pasted text" in app.composer.text, what="the placeholder")
        assert app.composer.text == "why does this fail: [Pasted text #1 +164 lines]"
        assert "log line 100" not in screen_text(app)
        await type_text(pilot, " thanks")
        await pilot.press("enter")
        await wait_idle(pilot)
    sent = str(server.requests[0].body["messages"][-1]["content"])
    assert sent.startswith("why does this fail: log line 1\n") and "log line 164 thanks" in sent
    assert "Pasted text" not in sent


async def test_a_short_paste_stays_text(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste("two\nlines"))
        await wait_until(pilot, lambda: app.composer.text == "two\nlines", what="the paste")
