"""RetryPolicy, Retry-After parsing and the shared retry loop."""

from __future__ import annotations

import email.utils
import time

import pytest

from agent_cli.models.base import Completed, Retrying, TextDelta
from agent_cli.models.errors import ContextWindowExceeded, ModelError, TransientError
from agent_cli.models.retry import RetryPolicy, retry_after_from_message, retry_after_seconds, stream_with_retries


def test_retry_after_header_wins_and_is_capped():
    policy = RetryPolicy(base_delay=0.5, max_delay=30)
    assert policy.delay(1, retry_after=2.5) == 2.5
    assert policy.delay(3, retry_after=0) == 0
    assert policy.delay(1, retry_after=3600) == 60
    assert policy.delay(1, retry_after=-5) == 0


def test_backoff_grows_with_jitter_and_respects_max_delay():
    policy = RetryPolicy(base_delay=0.5, max_delay=3.0)
    for _ in range(50):
        assert 0.25 <= policy.delay(1) <= 0.5
        assert 1.0 <= policy.delay(3) <= 2.0
        assert 1.5 <= policy.delay(10) <= 3.0
    assert len({policy.delay(2) for _ in range(20)}) > 1  # jittered


@pytest.mark.parametrize(
    "headers, expected",
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after": "0.25"}, 0.25),
        ({"retry-after-ms": "1500", "retry-after": "9"}, 1.5),
        ({"retry-after-ms": "junk", "retry-after": "3"}, 3.0),
        ({"retry-after": "soon"}, None),
        ({}, None),
        (None, None),
    ],
)
def test_retry_after_seconds(headers, expected):
    assert retry_after_seconds(headers) == expected


def test_retry_after_http_date():
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    assert 25 <= retry_after_seconds({"retry-after": when}) <= 31
    past = email.utils.formatdate(time.time() - 30, usegmt=True)
    assert retry_after_seconds({"retry-after": past}) == 0


def test_retry_after_from_message():
    assert retry_after_from_message("Rate limit reached. Please try again in 1.5s.") == 1.5
    assert retry_after_from_message("Please try again in 250ms") == 0.25
    assert retry_after_from_message("Overloaded") is None


def scripted_attempts(*outcomes):
    """An attempt factory: each outcome is an exception to raise after one delta, or 'ok'."""
    calls = []

    def attempt():
        calls.append(1)
        outcome = outcomes[len(calls) - 1]

        async def run():
            yield TextDelta(f"attempt {len(calls)}")
            if outcome != "ok":
                raise outcome
            yield Completed(None)

        return run()

    return attempt, calls


async def run_loop(attempt, policy):
    slept: list[float] = []

    async def sleep(delay):
        slept.append(delay)

    events = [e async for e in stream_with_retries(attempt, policy, sleep=sleep)]
    return events, slept


async def test_transient_failures_are_retried_with_events():
    attempt, calls = scripted_attempts(
        TransientError("HTTP 503: busy", retry_after=0.2), TransientError("connection lost"), "ok"
    )
    events, slept = await run_loop(attempt, RetryPolicy(max_attempts=5, base_delay=0.01, max_delay=0.01))
    assert len(calls) == 3
    assert events[1] == Retrying(1, 5, 0.2, "HTTP 503: busy")
    assert isinstance(events[3], Retrying) and events[3].attempt == 2 and events[3].reason == "connection lost"
    assert slept == [0.2, events[3].delay]
    assert events[-1] == Completed(None)


async def test_exhausted_retries_raise_model_error():
    attempt, calls = scripted_attempts(*[TransientError("HTTP 500: boom")] * 3)
    with pytest.raises(ModelError) as caught:
        await run_loop(attempt, RetryPolicy(max_attempts=3, base_delay=0))
    assert type(caught.value) is ModelError
    assert str(caught.value) == "HTTP 500: boom (gave up after 3 attempts)"
    assert len(calls) == 3


@pytest.mark.parametrize("error", [ModelError("bad key"), ContextWindowExceeded("too long")])
async def test_permanent_errors_are_not_retried(error):
    attempt, calls = scripted_attempts(error, "ok")
    with pytest.raises(type(error)):
        await run_loop(attempt, RetryPolicy(base_delay=0))
    assert len(calls) == 1
