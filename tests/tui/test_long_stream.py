"""A long streamed answer behind a long, pruning transcript arrives whole (issue 28, bug 8)."""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown

from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.user_message import UserMessage
from bench.tui_stream import markdown_document
from tests.fake_server import Reply
from tests.tui.render_work import RenderWork, widgets_of


async def test_a_long_answer_streams_whole_behind_200_cells(make_app, server):
    document = markdown_document(30)  # four segments of the live answer, each sealed while the next streams
    server.script(Reply(text=document, chunk_size=16))
    app = make_app("model_context_window=1000000")
    async with app.run_test(size=(120, 40)):
        for index in range(200):  # the transcript prunes past 120 cells
            cell = UserMessage(f"question {index}") if index % 2 == 0 else AssistantMessage(f"answer **{index}**\n")
            await app.transcript.add(cell)
        app.send("write the document")
        deadline = asyncio.get_running_loop().time() + 120
        while app.busy and asyncio.get_running_loop().time() < deadline:
            await asyncio.sleep(0.005)  # not pilot.pause: it waits for the screen to settle, which hides the race
        answer = app.transcript.query(AssistantMessage).last()
        assert answer.text == document
        shown = "".join(markdown.source for markdown in answer.query(Markdown))
        assert shown == document  # every segment's widget holds its part: nothing lost or doubled
    assert len(app.transcript.cells) <= app.transcript.max_cells + 20


async def test_a_streamed_answer_does_no_work_on_the_cells_behind_it(make_app, server):
    """Issue 28, bug 8: the cost of a streamed answer does not grow with the transcript behind it.

    Counted, not timed, behind 65 and behind 233 cells (pruned to the same number): while the
    answer streams and the screen is laid out again and again, no cell off the screen is rendered
    or painted again, each is measured at most twice (the transcript is one line shorter while the
    turn runs), and each layout places about as many of the older widgets behind 233 cells as behind 65."""
    short = await stream_behind(make_app, server, 65)
    long = await stream_behind(make_app, server, 233)
    for work, older, off_screen in (short, long):
        assert work.layouts >= 3, "the screen must have been laid out as the answer grew, or nothing was tested"
        assert len(off_screen) > 20 and work.paints_of(older - off_screen) > 0  # the counters count
        rendered = {type(widget).__name__: work.renders[widget] for widget in off_screen if work.renders[widget]}
        assert not rendered, f"cells off the screen were rendered again: {rendered}"
        assert work.paints_of(off_screen) == 0
        assert max(work.heights[widget] for widget in older) <= 2
        assert work.renders_of(older - off_screen) <= len(older - off_screen)  # what shows, once at most
    (short_work, short_older, _), (long_work, long_older, _) = short, long
    assert len(long_older) == len(short_older)
    # Not equal to the widget: a layout that comes before the cell leaving the live window is
    # frozen places its old widgets too. Unpruned, 233 cells would place about three times more.
    assert long_work.placed_watched / long_work.layouts <= 1.1 * short_work.placed_watched / short_work.layouts


async def stream_behind(make_app, server, cells: int) -> tuple[RenderWork, set, set]:
    """Stream a 14 KB answer (three segments) behind ``cells`` cells; count the work on them."""
    document = markdown_document(14)
    server.script(Reply(text=document, chunk_size=16))
    app = make_app("model_context_window=1000000")
    async with app.run_test(size=(120, 40)) as pilot:
        app.transcript.max_cells = 40  # prunes 21 cells whenever there are 61: 65 and 233 cells both leave 44
        for index in range(cells):  # live, frozen and pruned cells
            await app.transcript.add(
                UserMessage(f"question {index}")
                if index % 2 == 0
                else AssistantMessage(f"answer **{index}**\n\n- reads\n- writes `x`\n")
            )
        await pilot.pause()
        older = widgets_of(app.transcript.children)
        off_screen = {widget for widget in older if not widget.region.overlaps(app.transcript.region)}
        work = RenderWork(watched=older)
        with work.counting():
            app.send("write the document")
            while app.busy:
                await asyncio.sleep(0.005)
            for _ in range(2):  # mounting and layout go on after the turn
                await pilot.pause()
        assert app.transcript.query(AssistantMessage).last().text == document
    return work, older, off_screen


async def test_a_finished_answer_keeps_its_height_when_it_is_frozen(make_app, server):
    """Issue 28, bug 9: an answer that leaves the live window must not jump the transcript."""
    from agent_cli.tui.widgets.frozen_answer import FrozenAnswer
    from tests.tui.helpers import screen_text

    text = "## Result\n\nThe function **works**:\n\n- parses input\n- returns `42`\n\n```python\ndef f():\n    return 42\n```\n\nDone.\n"

    def gap(app) -> int:
        lines = screen_text(app).splitlines()
        return next(i for i, line in enumerate(lines) if "after" in line) - next(
            i for i, line in enumerate(lines) if "before" in line
        )

    app = make_app()
    async with app.run_test(size=(80, 50)) as pilot:
        await app.transcript.add(UserMessage("before"))
        answer = AssistantMessage()
        await app.transcript.add(answer)
        await answer.write(text)
        await pilot.pause(0.3)
        await answer.finish(text)
        await app.transcript.add(UserMessage("after"))
        await pilot.pause(0.3)
        streamed = gap(app)
        for index in range(app.transcript.live_cells):
            await app.transcript.add(UserMessage(f"later {index}"))
        await pilot.pause(0.3)
        assert app.transcript.query(FrozenAnswer)
        app.transcript.scroll_home(animate=False)
        await pilot.pause(0.3)
        assert gap(app) == streamed


async def test_the_live_answer_is_updated_as_often_as_its_updates_allow(make_app, server):
    """Issue 35, item 19: a fast model's stream is appended at a pace set by what an update took
    (append, layout and paint), so updates keep to ``RENDER_SHARE`` of the loop and the answer
    keeps up with the stream; bench/tui_stream.py --delay measures the result."""
    from agent_cli.tui.widgets import assistant_message as live

    document = markdown_document(3)
    server.script(Reply(text=document, chunk_size=16, delay=0.005))
    app = make_app("model_context_window=1000000")
    async with app.run_test(size=(120, 40)) as pilot:
        app.send("write the document")
        while app.busy:
            await asyncio.sleep(0.005)
        await pilot.pause()
        answer = app.transcript.query(AssistantMessage).last()
        assert "".join(markdown.source for markdown in answer.query(Markdown)) == document
        measured = answer._update_seconds
        assert measured > 0, "no update was measured"
        paced = min(live.MAX_FLUSH_SECONDS, max(live.MIN_FLUSH_SECONDS, measured / live.RENDER_SHARE))
        assert answer.flush_interval == paced
        answer._update_seconds = live.MAX_FLUSH_SECONDS  # a very slow update: wait the longest
        assert answer.flush_interval == live.MAX_FLUSH_SECONDS
