"""Retrying a streamed request: one policy and one loop, shared by every model client.

This loop retries both failed requests and streams that die half-way, and tells the consumer
about each retry with a ``Retrying`` event.
"""

from __future__ import annotations

import asyncio
import random
import re
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from dataclasses import dataclass

from agent_cli.models.base import Retrying, StreamEvent
from agent_cli.models.errors import ModelError, TransientError

# A server asking us to wait longer than this gets this long; the user can always retry later.
MAX_RETRY_AFTER = 60.0


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    max_attempts: int = 5
    base_delay: float = 0.5
    max_delay: float = 30.0
    max_retry_after: float = MAX_RETRY_AFTER

    def delay(self, failed_attempt: int, retry_after: float | None = None) -> float:
        """Seconds to wait after attempt ``failed_attempt`` (1-based) failed.

        A server's ``Retry-After`` wins (capped); otherwise exponential backoff with jitter
        between half and all of the capped exponential step, so clients do not retry in lockstep.
        """
        if retry_after is not None:
            return min(max(retry_after, 0.0), self.max_retry_after)
        step = min(self.max_delay, self.base_delay * 2 ** (failed_attempt - 1))
        return step * (0.5 + random.random() / 2)


def retry_after_seconds(headers: Mapping[str, str] | None) -> float | None:
    """Parse ``retry-after-ms`` or ``retry-after`` (seconds or an HTTP date); None if absent."""
    if not headers:
        return None
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            return max(float(millis) / 1000, 0.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if value is None:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    import email.utils  # only for the rare HTTP-date form; it costs start-up otherwise

    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(when.timestamp() - time.time(), 0.0)


_TRY_AGAIN = re.compile(r"try again in (\d+(?:\.\d+)?)\s*(ms|s)\b", re.IGNORECASE)


def retry_after_from_message(message: str) -> float | None:
    """OpenAI puts the wait in the text of in-stream rate-limit errors ("try again in 1.2s")."""
    match = _TRY_AGAIN.search(message or "")
    if not match:
        return None
    value = float(match.group(1))
    return value / 1000 if match.group(2).lower() == "ms" else value


async def stream_with_retries(
    attempt: Callable[[], AsyncIterator[StreamEvent]],
    policy: RetryPolicy,
    sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
) -> AsyncIterator[StreamEvent]:
    """Run ``attempt()`` until one finishes, retrying on ``TransientError``.

    Before each retry yields ``Retrying(failed_attempt, max_attempts, delay, reason)``; deltas
    already yielded belong to the abandoned attempt. After the last attempt fails, raises
    ``ModelError`` with the last reason.
    """
    max_attempts = max(1, policy.max_attempts)
    for number in range(1, max_attempts + 1):
        try:
            async for event in attempt():
                yield event
            return
        except TransientError as exc:
            reason = str(exc) or type(exc).__name__
            if number >= max_attempts:
                tries = "1 attempt" if max_attempts == 1 else f"{max_attempts} attempts"
                raise ModelError(f"{reason} (gave up after {tries})").with_request_id(exc.request_id) from exc
            delay = policy.delay(number, exc.retry_after)
            yield Retrying(number, max_attempts, delay, reason)
            await sleep(delay)
