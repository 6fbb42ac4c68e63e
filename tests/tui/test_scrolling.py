"""Sending jumps to the newest output; new output under a view scrolled up shows a marker
(issue 35, item 6)."""

from __future__ import annotations

from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

LONG = "\n\n".join(f"paragraph {n} of a long answer." for n in range(60))


async def long_transcript(app, pilot, server) -> None:
    for prompt in ("one", "two"):
        server.script(Reply(text=LONG))
        app.send(prompt)
        await wait_idle(pilot)
    await pilot.pause(0.1)


async def test_sending_while_scrolled_up_jumps_to_the_prompt_and_its_answer(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await long_transcript(app, pilot, server)
        await pilot.press("pageup", "pageup")
        assert not app.transcript.at_bottom
        server.script(Reply(text="the answer to the third"))
        await type_text(pilot, "third question")
        await pilot.press("enter")
        await wait_idle(pilot)
        await pilot.pause(0.1)
        assert app.transcript.at_bottom
        assert "the answer to the third" in screen_text(app) and "third question" in screen_text(app)


async def test_new_output_below_a_view_scrolled_up_shows_a_marker(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await long_transcript(app, pilot, server)
        await pilot.press("pageup", "pageup")
        server.script(Reply(text=LONG))
        app.send("more")  # not typed: the view stays where the user put it
        await wait_idle(pilot)
        await wait_until(pilot, lambda: app.transcript.below.shown, what="the marker")
        assert "new output below" in screen_text(app)
        assert not app.transcript.at_bottom
        await pilot.press("ctrl+end")
        await wait_until(pilot, lambda: not app.transcript.below.shown, what="the marker to go")
        assert "new output below" not in screen_text(app)
