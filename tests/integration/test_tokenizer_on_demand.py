"""The tokenizer stays off the path to the first request: a fresh `agent exec` turn counts with the
estimate and loads tiktoken's o200k_base only near a limit the session acts on, or for /context
and /status. Real Session, real SDK client, the fake server over HTTP; tiktoken itself, no mocks.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.context import tokens
from agent_cli.context.tokens import ESTIMATE_METHOD
from tests.fake_server import FakeModelServer, Reply
from tests.integration.test_compaction import TASK, WINDOW, Job, is_summary_request, of
from tests.session_helpers import collect_events, make_session

MODEL = "gpt-4o"  # counted with o200k_base


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """Data files of hex digests: o200k counts ~2.3x their bytes/4 estimate, so deciding by the
    estimate would compact later than deciding exactly."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for i in range(6):
        lines = "".join(f"{n:03d} {hashlib.sha256(f'{i}-{n}'.encode()).hexdigest()}\n" for n in range(220))
        (root / f"data{i}.txt").write_text(lines)
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    return root


@pytest.fixture
def fresh_process(monkeypatch):
    """Module state as in a new process: no encoding loaded or being loaded."""
    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(tokens, "_load_errors", {})
    monkeypatch.setattr(tokens, "_requested", set())


def loaded() -> bool:
    return tokens._loaded.get("o200k_base") is not None


async def test_a_fresh_turn_estimates_and_displays_say_so_until_status_loads_the_tokenizer(
    repo, monkeypatch, fresh_process
):
    seen: list[bool] = []  # per request: was the encoding loaded when it arrived

    def answer(rec) -> Reply:
        seen.append(loaded())
        return Reply(text="done")

    with FakeModelServer(fallback=answer) as server:
        session = make_session(server, repo, monkeypatch, "model_context_window=128000", model=MODEL)
        first = await collect_events(session, "say done")
        assert seen == [False] and not loaded() and not session.tokens.exact
        count = of(first, ev.TokenCount)[-1]
        assert count.counting_method == ESTIMATE_METHOD
        assert count.accuracy == "calibrated ×" + f"{session.tokens.calibration.ratio:.2f} (1 usage report)"

        status = of(await collect_events(session, "/status"), ev.Notice)[-1].text
        assert "tiktoken o200k_base, exact" in status and loaded() and session.tokens.exact
        history = session.history
        assert history.estimated_tokens == sum(session.tokens.item_tokens(item) for item in history.items)

        second = await collect_events(session, "say done again")
        count = of(second, ev.TokenCount)[-1]
        assert (count.counting_method, count.accuracy) == ("tiktoken o200k_base", "exact")
        usage = of(await collect_events(session, "/context"), ev.ContextUsage)[-1]
        assert (usage.counting_method, usage.accuracy) == ("tiktoken o200k_base", "exact")
    assert seen == [False, True]


async def test_near_the_threshold_the_tokenizer_loads_and_compaction_is_as_with_it_loaded_up_front(
    repo, monkeypatch, fresh_process
):
    def job_server(states: list[bool]) -> FakeModelServer:
        job = Job([f"data{i}.txt" for i in range(6)])

        def answer(rec):
            states.append(loaded())
            return job(rec)

        return FakeModelServer(context_window=WINDOW, fallback=answer)

    runs = []
    for eager in (False, True):  # lazily first: the module state starts without the encoding
        states: list[bool] = []
        with job_server(states) as server:
            session = make_session(server, repo, monkeypatch, f"model_context_window={WINDOW}", model=MODEL)
            if eager:
                assert session.tokens.load()  # what every turn did before: count exactly from the start
            events = await collect_events(session, TASK)
            assert session.tokens.exact
        runs.append((events, states, server.requests))

    (lazy, lazy_states, lazy_requests), (eager, _, eager_requests) = runs
    assert lazy_states[0] is False  # the first request went out before the encoding loaded
    summaries = [i for i, rec in enumerate(lazy_requests) if is_summary_request(rec)]
    assert summaries and all(lazy_states[i] for i in summaries)  # and it was loaded before compacting

    def compactions(events):
        return [
            (f.trigger, f.items_before, f.items_after, f.tokens_before, f.tokens_after, f.applied)
            for f in of(events, ev.CompactionFinished)
        ]

    assert compactions(lazy) == compactions(eager) and compactions(lazy)
    assert [rec.body for rec in lazy_requests] == [rec.body for rec in eager_requests]  # the same requests
    assert of(lazy, ev.TurnComplete)[0].last_message == of(eager, ev.TurnComplete)[0].last_message
