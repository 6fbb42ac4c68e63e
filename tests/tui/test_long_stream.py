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
