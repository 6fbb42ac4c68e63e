"""The app against the fake server over real HTTP: answers, tools, interrupts, the queue."""

from __future__ import annotations

import asyncio
import threading

import pytest

from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.notice_cell import NoticeCell
from agent_cli.tui.widgets.tool_cell import ToolCell
from agent_cli.tui.widgets.user_message import UserMessage
from tests.fake_server import Reply, ToolCall, Usage
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

ANSWER = "## Plan\n\nFirst a **bold** claim, then a list:\n\n- one\n- two\n\n```python\nprint('hi')\n```\n"


def last_user_text(request) -> str:
    content = request.body["messages"][-1]["content"]
    return content if isinstance(content, str) else str(content)


async def test_a_prompt_streams_a_markdown_answer(make_app, server):
    server.script(Reply(text=ANSWER, chunk_size=4))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hello there")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert [cell.text for cell in app.transcript.query(UserMessage)] == ["hello there"]
        (message,) = app.transcript.query(AssistantMessage)
        assert message.text == ANSWER
        assert not message.streaming
        shown = screen_text(app)
        assert "First a bold claim" in shown and "print('hi')" in shown and "• one" in shown
        assert app.composer.text == ""
    assert "hello there" in last_user_text(server.requests[0])
    server.assert_done()


async def test_the_first_prompt_from_the_command_line_is_sent(make_app, server):
    server.script(Reply(text="got it"))
    app = make_app(prompt="from argv")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: len(server.requests) == 1, what="the request")
        await wait_idle(pilot)
        assert [m.text for m in app.transcript.query(AssistantMessage)] == ["got it"]
    assert "from argv" in last_user_text(server.requests[0])


async def test_tool_cells_appear_while_running_and_finish_with_exit_code_and_output(make_app, server):
    command = "printf 'line %s\\n' 1 2 3 4 5 6 7 8 9 10; sleep 0.4"
    server.script(
        Reply(text="Running it.", tool_calls=[ToolCall("shell", {"command": command})]),
        Reply(text="It printed ten lines."),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "count")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.transcript.query(ToolCell)), what="the tool cell")
        cell = app.transcript.query_one(ToolCell)
        assert cell.running and "running…" in screen_text(app)
        await wait_idle(pilot)
        assert not cell.running and cell.result.success and cell.result.exit_code == 0
        shown = screen_text(app)
        assert "✓ shell" in shown and "exit 0" in shown
        assert "line 1" in shown and "line 10" in shown and "more lines" in shown
        assert "line 5" not in shown  # the middle is folded away
        cell.focus()
        await pilot.press("enter")
        assert cell.expanded
        await pilot.pause()
        assert "line 5" in screen_text(app)
        assert [m.text for m in app.transcript.query(AssistantMessage)][-1] == "It printed ten lines."
    server.assert_done()


async def test_a_failing_command_shows_its_exit_code(make_app, server):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo oops; exit 3"})]), Reply(text="It failed."))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "fail")
        await pilot.press("enter")
        await wait_idle(pilot)
        cell = app.transcript.query_one(ToolCell)
        assert cell.result.exit_code == 3 and cell.has_class("-failed")
        assert "✗ shell" in screen_text(app) and "exit 3" in screen_text(app) and "oops" in screen_text(app)


async def test_escape_interrupts_a_running_turn_and_the_session_goes_on(make_app, server):
    server.script(Reply(text="word " * 400, chunk_size=5, delay=0.02), Reply(text="still here"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "talk a lot")
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.transcript.query(AssistantMessage)), what="streaming to start")
        assert app.busy and "esc to interrupt" in screen_text(app)
        await pilot.press("escape")
        await wait_idle(pilot)
        notices = [n for n in app.transcript.query(NoticeCell) if n.kind == "warning"]
        assert notices and "interrupted" in screen_text(app)
        streamed = app.transcript.query(AssistantMessage).first().text
        assert 0 < len(streamed) < len("word " * 400)
        await type_text(pilot, "again")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.transcript.query(AssistantMessage).last().text == "still here"
    assert len(server.requests) == 2


async def test_a_message_sent_during_a_turn_is_queued_then_sent(make_app, server):
    typed = threading.Event()  # the first answer waits for the second message, however slow the typing

    def first(request):
        typed.wait(60)
        return Reply(text="a slow answer in five parts", chunk_size=6, delay=0.1)

    server.script(first, Reply(text="second answer"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.busy, what="the turn to start")
        await type_text(pilot, "second")
        await pilot.press("enter")
        assert app.queue == ["second"]
        assert "queued" in screen_text(app) and "second" in screen_text(app)
        assert len(server.requests) <= 1
        typed.set()
        await wait_until(pilot, lambda: len(server.requests) == 2, what="the queued message to be sent")
        await wait_idle(pilot)
        assert "queued" not in screen_text(app)
        assert [m.text for m in app.transcript.query(UserMessage)] == ["first", "second"]
        assert app.transcript.query(AssistantMessage).last().text == "second answer"
    assert "second" in last_user_text(server.requests[1])


async def test_queued_messages_return_to_the_composer_after_an_interrupt(make_app, server):
    server.script(Reply(text="slow " * 20, chunk_size=10, delay=0.4))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "first")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.busy, what="the turn to start")
        await type_text(pilot, "later")
        await pilot.press("enter")
        await pilot.press("escape")
        await wait_idle(pilot)
        assert app.composer.text == "later" and app.queue == []
    assert len(server.requests) == 1


async def test_status_bar_shows_context_left_and_session_tokens(make_app, server):
    server.script(Reply(text="counted", usage=Usage(input_tokens=4000, cached_input_tokens=1000, output_tokens=250)))
    app = make_app("model_context_window=100000")
    async with app.run_test(size=(140, 30)) as pilot:
        await type_text(pilot, "count")
        await pilot.press("enter")
        await wait_idle(pilot)
        count = app.status.count
        assert count.total.input_tokens == 4000 and count.total.output_tokens == 250
        line = str(app.status.build_content())
        assert f"{count.percent_left}% context left" in line
        assert "↑4.0k ↓250 (25% cached)" in line
        assert "test-model · openai-chat · agent" in line
        assert f"{count.percent_left}% context left" in screen_text(app)


async def test_a_retry_is_shown_and_the_partial_answer_dropped(make_app, server):
    server.script(Reply.http_error(429, retry_after=0), Reply(text="after the retry"))
    app = make_app("retry_max_attempts=3")
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert any(n.kind == "retry" for n in app.transcript.query(NoticeCell))
        assert [m.text for m in app.transcript.query(AssistantMessage)] == ["after the retry"]


async def test_a_failed_turn_shows_the_error(make_app, server):
    server.script(Reply.http_error(400, message="bad request from the test"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hi")
        await pilot.press("enter")
        await wait_idle(pilot)
        errors = [n for n in app.transcript.query(NoticeCell) if n.kind == "error"]
        assert errors and "bad request from the test" in errors[0].text
        assert not app.busy


def shown_source(message: AssistantMessage) -> str:
    """The answer's text as its markdown widgets hold it: what is drawn, or being drawn."""
    return "".join(getattr(child, "source", "") for child in message.children)


@pytest.mark.parametrize("how", ["key", "terminal thread"])
async def test_escape_stops_showing_the_answer_the_moment_it_is_read(make_app, server, how):
    """Issue 51, item 3: text kept appearing for a second after Esc (what had arrived was drawn
    first, and only then was "interrupted" shown). Nothing that was not on screen when Esc was
    read is drawn after it; "terminal thread": Esc as the terminal's input thread hands it over
    (terminal_driver.py), ahead of the key queue."""
    server.script(Reply(text="A paragraph of the answer that goes on.\n\n" * 400, chunk_size=8, delay=0.01))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("write a lot")
        await wait_until(pilot, lambda: bool(app.transcript.query(AssistantMessage)), what="the answer")
        message = app.transcript.query_one(AssistantMessage)
        message._update_seconds = 10.0  # updates a second apart: text waits to be drawn meanwhile
        await wait_until(pilot, lambda: bool(shown_source(message)), what="a first update")
        drawn = shown_source(message)
        await wait_until(pilot, lambda: shown_source(message) != drawn, what="the next update")
        await wait_until(pilot, lambda: bool(message._pending), what="text waiting to be drawn")
        # What is shown the moment Esc is read (the update it measured sets the pace again, and an
        # update may come before the key or the thread gets there): noted as the app stops it.
        shown_at_escape: list[str] = []

        def noting(stop):
            def noted() -> None:
                shown_at_escape.append(shown_source(message))
                stop()

            return noted

        message.halt, message.stop = noting(message.halt), noting(message.stop)
        if how == "key":
            await pilot.press("escape")
        else:
            assert await asyncio.to_thread(app.escape_read)
        await wait_idle(pilot)
        assert any("interrupted" in notice.text for notice in app.transcript.query(NoticeCell))
        at_escape = shown_at_escape[0]
        assert shown_source(message) == at_escape  # nothing more was drawn
        assert message.text == at_escape  # and what never showed is not kept as shown


async def test_escape_read_while_a_new_part_of_the_answer_is_mounted_shows_none_of_it(make_app, server):
    """A long answer is drawn in parts, each a widget of its own: Esc read while an update waits for
    the next part's widget to be mounted stops that update before its text is shown."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        answer = AssistantMessage()
        await app.transcript.add(answer)
        await answer.write("A paragraph that was never shown.\n\n")
        update = asyncio.ensure_future(answer._flush())  # as its timer starts it
        await asyncio.sleep(0)  # its first step: the part's widget is made, and its mount awaited
        assert answer._live is not None and not update.done() and not shown_source(answer)
        answer.stop()  # Esc is read
        await update
        await wait_idle(pilot)
        assert shown_source(answer) == "" and answer.text == ""
