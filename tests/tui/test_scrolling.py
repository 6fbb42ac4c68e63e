"""Sending jumps to the newest output; new output under a view scrolled up shows a marker
(issue 35, item 6)."""

from __future__ import annotations

from agent_cli.tui.screens.trust import TrustScreen
from agent_cli.tui.widgets.transcript import BELOW_CHECK_SECONDS
from tests.fake_server import Reply
from tests.integration.test_trust import marker_repo
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until
from tests.tui.test_trust_tui import make_app as trust_app

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


async def no_marker_for_a_while(app, pilot, when: str) -> None:
    """Over several of the transcript's checks, nothing is below the view and no marker shows."""
    for _ in range(8):
        await pilot.pause(BELOW_CHECK_SECONDS / 2)
        assert app.transcript.at_bottom, f"{when}: the view is not at the bottom"
        assert not app.transcript.below.shown, f"{when}: a 'new output below' marker with nothing below"


async def test_no_new_output_marker_when_nothing_is_below(server, tmp_path, monkeypatch):
    """Issue 51, item 4: after the trust answer, short turns and the first Ctrl+C the transcript
    is shorter than the view; no marker may show (Textual keeps the anchored scroll_y negative then)."""
    repo = marker_repo(tmp_path)
    app = trust_app(repo, server, monkeypatch)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the trust question")
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), what="the answer")
        await no_marker_for_a_while(app, pilot, "after the trust answer")
        for turn in range(3):
            server.script(Reply(text=f"answer {turn}: " + "a few words " * 30))
            await type_text(pilot, f"question {turn}")
            await pilot.press("enter")
            await wait_idle(pilot)
            await no_marker_for_a_while(app, pilot, f"after turn {turn}")
        await pilot.press("ctrl+c")
        await no_marker_for_a_while(app, pilot, "after the first ctrl+c")
        assert "new output below" not in screen_text(app)
