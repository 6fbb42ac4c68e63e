"""A long paste shows as `[Pasted text #N +L lines]` and is sent whole (issue 35, item 11)."""

from __future__ import annotations

import pytest
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


@pytest.mark.parametrize(
    "ends", ["\r", "\r\n", "\n", "\r+last", "\n+last"], ids=["CR", "CRLF", "LF", "CR, last line open", "LF, last open"]
)
async def test_a_paste_with_any_line_ends_counts_its_lines_as_a_person_does_and_sends_lf(make_app, server, ends):
    """tmux, xterm and VTE paste with CR ends (issue 51, item 1): 164 lines are `+164 lines`,
    with or without a new line after the last, and the request carries 164 lines, not one."""
    end, open_last = ends.removesuffix("+last"), ends.endswith("+last")
    text = "".join(f"log line {n}{end}" for n in range(1, 165))
    if open_last:
        text = text.removesuffix(end)
    server.script(Reply(text="read it"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste(text))
        await wait_until(pilot, lambda: "Pasted text" in app.composer.text, what="the placeholder")
        assert app.composer.text == "[Pasted text #1 +164 lines]"
        await pilot.press("enter")
        await wait_idle(pilot)
    sent = str(server.requests[0].body["messages"][-1]["content"])
    assert "\r" not in sent
    assert [line for line in sent.split("\n") if line.startswith("log line")] == [
        f"log line {n}" for n in range(1, 165)
    ]


async def test_a_short_paste_with_cr_ends_is_lines(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.post_message(events.Paste("two\rlines\r\n"))
        await wait_until(pilot, lambda: app.composer.text == "two\nlines\n", what="the paste, with LF ends")
