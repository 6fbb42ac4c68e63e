"""The turn loop against an in-process scripted model (tests/scripted_model.py): no server, no HTTP.

What a turn does with the model's answers: run the tools it calls and send their outputs back,
ask once to go on after a cut-off answer, never run a call cut off mid-arguments, resume a paused
turn, and end a failed request as a failed turn with a history the next turn can use.
"""

from __future__ import annotations

import asyncio
import json

from agent_cli import events as ev
from agent_cli.items import Message, ToolCall, ToolOutput
from agent_cli.models.base import STOP_MAX_TOKENS, STOP_PAUSED
from agent_cli.models.errors import ModelError
from tests.scripted_model import Reply, ScriptedModel, scripted_session
from tests.session_helpers import collect_events


def read_call(call_id: str, path: str) -> ToolCall:
    return ToolCall(call_id, "read_file", json.dumps({"path": path}))


async def test_a_tool_call_runs_and_its_output_goes_back_to_the_model(tmp_path):
    (tmp_path / "notes.txt").write_text("the build uses make\n")
    model = ScriptedModel(read_call("c1", "notes.txt"), "It uses make.")
    session = scripted_session(tmp_path, model)
    events = await collect_events(session, "how is it built?")
    kinds = [type(event).__name__ for event in events if not isinstance(event, (ev.TokenCount, ev.TextDelta))]
    assert kinds[kinds.index("ToolCallBegin") :] == ["ToolCallBegin", "ToolCallEnd", "AgentMessage", "TurnComplete"]
    assert events[-1] == ev.TurnComplete("It uses make.", "end")
    sent_back = [item for item in model.prompts[1].items if isinstance(item, ToolOutput)]
    assert len(sent_back) == 1 and "the build uses make" in sent_back[0].output and sent_back[0].success
    await session.aclose()


async def test_an_answer_cut_off_by_the_output_limit_is_continued_once(tmp_path):
    model = ScriptedModel(
        Reply([Message("assistant", "The first half")], STOP_MAX_TOKENS),
        Reply([Message("assistant", "and still cut")], STOP_MAX_TOKENS),
    )
    session = scripted_session(tmp_path, model)
    events = await collect_events(session, "explain it")
    warnings = [event.message for event in events if isinstance(event, ev.Warning) and "cut off" in event.message]
    assert len(warnings) == 2 and "asking the model to continue" in warnings[0]
    assert len(model.prompts) == 2  # asked once, not again
    last_sent = model.prompts[1].items[-1]
    assert isinstance(last_sent, Message) and last_sent.role == "user" and "continue" in last_sent.text.lower()
    assert isinstance(events[-1], ev.TurnComplete) and events[-1].stop_reason == STOP_MAX_TOKENS
    await session.aclose()


async def test_a_call_cut_off_before_its_arguments_were_complete_is_not_run(tmp_path):
    cut = ToolCall("c1", "shell", '{"command": "rm -rf bu')
    model = ScriptedModel(Reply([cut], STOP_MAX_TOKENS), "Sorry, sending it in parts.")
    session = scripted_session(tmp_path, model)
    events = await collect_events(session, "clean up")
    assert not [event for event in events if isinstance(event, ev.ToolCallBegin)]
    outputs = [item for item in model.prompts[1].items if isinstance(item, ToolOutput)]
    assert len(outputs) == 1 and not outputs[0].success and "was not run" in outputs[0].output
    assert isinstance(events[-1], ev.TurnComplete)
    await session.aclose()


async def test_a_paused_turn_is_resumed_by_sending_the_conversation_again(tmp_path):
    model = ScriptedModel(Reply([], STOP_PAUSED), "Done after the pause.")
    session = scripted_session(tmp_path, model)
    events = await collect_events(session, "a long job")
    assert len(model.prompts) == 2 and model.prompts[1].items == model.prompts[0].items
    assert events[-1] == ev.TurnComplete("Done after the pause.", "end")
    await session.aclose()


async def test_a_failed_request_fails_the_turn_and_the_next_turn_goes_on(tmp_path):
    model = ScriptedModel(ModelError("the server said no"), "Back again.")
    session = scripted_session(tmp_path, model)
    events = await collect_events(session, "first")
    assert isinstance(events[-1], ev.TurnFailed) and "the server said no" in events[-1].message
    events = await collect_events(session, "second")
    assert events[-1] == ev.TurnComplete("Back again.", "end")
    typed = [item.text for item in model.prompts[1].items if isinstance(item, Message) and item.role == "user"]
    assert typed[-2:] == ["first", "second"]  # the failed turn's prompt stays in the history
    await session.aclose()


async def test_an_interrupt_before_the_turn_task_first_runs_still_ends_the_turn(tmp_path):
    """A stop that comes the moment the task is made (exec's reader gone at once, Ctrl+C then):
    the task is cancelled before its first step, and the events still end instead of waiting."""
    session = scripted_session(tmp_path, ScriptedModel("never asked"))
    turn = session.run_in_task(lambda emit: session.turn("hi", emit))
    first = asyncio.ensure_future(anext(turn))
    await asyncio.sleep(0)  # the iterator made the turn's task and waits for its events; the task has not run
    assert session.running
    session.interrupt()
    events = [await asyncio.wait_for(first, timeout=10), *[event async for event in turn]]
    assert [type(event) for event in events] == [ev.TurnAborted] and not session.running
    await session.aclose()


async def test_closing_the_events_of_finished_work_leaves_the_work_after_it_running(tmp_path):
    """Work that waited for the session to be idle starts the moment the work before it ends, which
    may be before that work's events are read to their end (under load, the SDK host's queued mode
    switch and its next prompt): closing the earlier events then must not stop the later work."""
    session = scripted_session(tmp_path, ScriptedModel("never asked"))

    def saying(text: str):
        async def body(emit) -> None:
            emit(ev.Warning(text))

        return body

    first = session.run_in_task(saying("first"))
    assert await anext(first) == ev.Warning("first")
    await session.wait_idle()  # its work is done; the end of its events is not read yet
    second = session.run_in_task(saying("second"))
    started = asyncio.ensure_future(anext(second))
    await asyncio.sleep(0)  # the later work's task is made and waits for its first step
    await first.aclose()
    assert await asyncio.wait_for(started, timeout=10) == ev.Warning("second")
    assert [event async for event in second] == []
    await session.aclose()
