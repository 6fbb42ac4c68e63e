"""The session core in-process: cancellation, concurrency of read-only tools, valid requests."""

from __future__ import annotations

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.config import load_config
from agent_cli.context.history import ABORTED_OUTPUT, normalize
from agent_cli.items import ToolOutput
from agent_cli.runtime import open_session
from agent_cli.session import Session
from tests.fake_server import Reply, ToolCall
from tests.processes import gone, started


@pytest.fixture
def session(server, tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    (tmp_path / "a.txt").write_text("alpha\n")
    (tmp_path / "b.txt").write_text("beta\n")
    config = load_config(tmp_path, ['model_provider="openai-chat"', 'model="m"', 'sandbox_mode="danger-full-access"'])
    return open_session(config, interactive=False)


def assert_calls_and_outputs_pair_up(request) -> None:
    """Every tool message answers an earlier call, and every call is answered."""
    called, answered = [], []
    for message in request.body["messages"]:
        called += [call["id"] for call in message.get("tool_calls") or []]
        if message["role"] == "tool":
            assert message["tool_call_id"] in called, "an output without its call"
            answered.append(message["tool_call_id"])
    assert sorted(called) == sorted(answered)


async def collect(session: Session, text: str, stop_when=None) -> list[ev.Event]:
    events = []
    async for event in submit(session, text):
        events.append(event)
        if stop_when and stop_when(event):
            session.interrupt()
    return events


async def test_interrupt_while_streaming_leaves_a_valid_history(server, session):
    server.script(Reply(text="word " * 200, chunk_size=5, delay=0.01), Reply(text="second answer"))
    events = await collect(session, "first", stop_when=lambda e: isinstance(e, ev.TextDelta))
    assert isinstance(events[-1], ev.TurnAborted)
    assert session.history.items == normalize(session.history.items)
    assert session.history.items[-1].text.startswith("<turn_aborted>")  # the model learns it was stopped
    events = await collect(session, "again")
    assert isinstance(events[-1], ev.TurnComplete) and events[-1].last_message == "second answer"
    server.assert_done()


async def test_interrupt_during_a_tool_call_closes_it_as_aborted(server, session, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "sleep 30.0101"})]), Reply(text="ok"))
    events, pid = [], None
    async for event in submit(session, "run it"):
        events.append(event)
        if isinstance(event, ev.ToolCallBegin):
            pid = await started("sleep", "30.0101")  # the command runs: stop the turn now
            session.interrupt()
    assert isinstance(events[-1], ev.TurnAborted) and "1 running tool call" in events[-1].reason
    outputs = [item for item in session.history.items if isinstance(item, ToolOutput)]
    assert [output.output for output in outputs] == [ABORTED_OUTPUT]
    await collect(session, "go on")
    assert_calls_and_outputs_pair_up(server.requests[-1])
    assert await gone(pid)


async def test_read_only_calls_run_concurrently_and_others_one_at_a_time(server, session):
    server.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": "a.txt"}), ToolCall("read_file", {"path": "b.txt"})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "true"}), ToolCall("shell", {"command": "true"})]),
        Reply(text="done"),
    )
    events = await collect(session, "read both")
    order = [type(e).__name__ for e in events if isinstance(e, (ev.ToolCallBegin, ev.ToolCallEnd))]
    assert order == ["ToolCallBegin", "ToolCallBegin", "ToolCallEnd", "ToolCallEnd"] + [
        "ToolCallBegin",
        "ToolCallEnd",
        "ToolCallBegin",
        "ToolCallEnd",
    ]
    for request in server.requests:
        assert_calls_and_outputs_pair_up(request)
    outputs = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert "alpha" in outputs[0] and "beta" in outputs[1]  # recorded in call order


async def test_a_tool_exception_becomes_an_error_output_and_the_turn_goes_on(server, session):
    server.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": 42})]),
        Reply(tool_calls=[ToolCall("read_file", {"path": "missing.txt"})]),
        Reply(text="recovered"),
    )
    events = await collect(session, "read")
    ends = [e for e in events if isinstance(e, ev.ToolCallEnd)]
    assert [end.success for end in ends] == [False, False]
    assert "must be of type string" in ends[0].output
    assert "missing.txt" in ends[1].output
    assert isinstance(events[-1], ev.TurnComplete)
