"""A long streamed answer behind a long, pruning transcript arrives whole (issue 28, bug 8)."""

from __future__ import annotations

import asyncio

from textual.widgets import Markdown

from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.user_message import UserMessage
from bench.tui_stream import markdown_document
from tests.fake_server import Reply


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


async def test_a_finished_answer_keeps_its_height_when_it_is_frozen(make_app, server):
    """Issue 28, bug 9: an answer that leaves the live window must not jump the transcript."""
    from agent_cli.tui.widgets.frozen_answer import FrozenAnswer
    from tests.tui.helpers import screen_text

    text = "## Result\n\nThe function **works**:\n\n- parses input\n- returns `42`\n\n```python\ndef f():\n    return 42\n```\n\nDone.\n"

    def gap(app) -> int:
        lines = screen_text(app).splitlines()
        return next(i for i, line in enumerate(lines) if "after" in line) - next(
            i for i, line in enumerate(lines) if "before" in line)

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
