"""A model server that accepts and never answers, or stalls mid-stream, is retried after short
limits that the retry message names; the wait shows as progress (fault 1 of issue 16)."""

from __future__ import annotations

import asyncio
import io
import socket
import threading

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.config import load_config
from agent_cli.headless.render_text import TextRenderer
from agent_cli.models.base import TextDelta
from agent_cli.models.errors import TransientError
from agent_cli.models.stream_limits import StreamLimits, within_limits
from agent_cli.runtime import open_session
from agent_cli.session import Session, model_wait
from tests.fake_server import Reply


@pytest.fixture
def silent_server():
    """Accepts connections and reads requests, but never sends a byte back."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.1)
        while not stop.is_set():
            try:
                held.append(server.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.getsockname()[1]}/v1"
    stop.set()
    thread.join()
    for conn in held:
        conn.close()
    server.close()


def new_session(tmp_path, monkeypatch, base_url: str, *settings: str) -> Session:
    monkeypatch.setenv("OPENAI_BASE_URL", base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    config = load_config(tmp_path, ['model_provider="openai-chat"', 'model="m"', *settings])
    return open_session(config, interactive=False)


async def run(session: Session, text: str) -> list[ev.Event]:
    try:
        async with asyncio.timeout(30):  # without the limits, the HTTP client would wait 10 minutes
            return [event async for event in submit(session, text)]
    finally:
        await session.aclose()


async def test_a_server_that_never_answers_is_retried_after_the_first_byte_limit(tmp_path, monkeypatch, silent_server):
    monkeypatch.setattr(model_wait, "NOTICE_EVERY_S", 0.1)
    session = new_session(tmp_path, monkeypatch, silent_server, "stream_idle_timeout_ms=400", "retry_max_attempts=2")
    events = await run(session, "hello?")
    [retry] = [e for e in events if isinstance(e, ev.Retry)]
    assert retry.reason == "no response from the model within 0.4 s (stream_idle_timeout_ms)"
    assert isinstance(events[-1], ev.TurnFailed) and "gave up after 2 attempts" in events[-1].message
    waiting = [e.seconds for e in events if isinstance(e, ev.ModelWaiting)]
    assert waiting and all(seconds >= 0.1 for seconds in waiting)  # progress while nothing arrives


async def test_a_slow_stream_is_retried_after_the_idle_limit(tmp_path, monkeypatch, server):
    server.script(Reply(text="a" * 40, chunk_size=8, delay=2.0), Reply(text="recovered"))
    session = new_session(tmp_path, monkeypatch, server.openai_base_url, "stream_idle_timeout_ms=300")
    events = await run(session, "go")
    [retry] = [e for e in events if isinstance(e, ev.Retry)]
    assert retry.reason.endswith("0.3 s (stream_idle_timeout_ms)")
    assert events[-1].last_message == "recovered"


async def test_a_stream_that_stalls_after_it_started_says_so():
    async def stalls():
        yield TextDelta("first words")
        await asyncio.sleep(30)
        yield TextDelta("never")

    seen = []
    stalled = r"^the model's stream stalled: nothing for 0.2 s \(stream_idle_timeout_ms\)$"
    with pytest.raises(TransientError, match=stalled):
        async for event in within_limits(stalls(), StreamLimits(idle_s=0.2)):
            seen.append(event)
    assert seen == [TextDelta("first words")]


async def test_the_connect_limit_is_separate_and_named(tmp_path, monkeypatch):
    """A listening socket whose backlog is full never completes a connection."""
    with socket.socket() as full:
        full.bind(("127.0.0.1", 0))
        full.listen(0)
        port = full.getsockname()[1]
        fillers = []
        for _ in range(4):  # fill the accept queue; later SYNs are dropped, so connect hangs
            filler = socket.socket()
            filler.setblocking(False)
            filler.connect_ex(("127.0.0.1", port))
            fillers.append(filler)
        session = new_session(
            tmp_path, monkeypatch, f"http://127.0.0.1:{port}/v1", "model_connect_timeout_ms=300", "retry_max_attempts=1"
        )
        events = await run(session, "hi")
        for filler in fillers:
            filler.close()
    assert isinstance(events[-1], ev.TurnFailed)
    expected = f"could not connect to http://127.0.0.1:{port}/v1 within 0.3 s (model_connect_timeout_ms)"
    assert expected in events[-1].message


def test_exec_progress_shows_the_wait_every_ten_seconds():
    out = io.StringIO()
    renderer = TextRenderer(out, color=False)
    for seconds in (5, 10, 15, 30):
        renderer.render(ev.ModelWaiting(seconds))
    assert out.getvalue() == "waiting for the model… 10 s\nwaiting for the model… 30 s\n"
