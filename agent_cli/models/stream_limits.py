"""How long to wait for a model server, in three separate limits.

- connect: opening the connection (``model_connect_timeout_ms``, 10 s), enforced by the HTTP
  client;
- first byte: from sending the request to its first stream event, and
- idle: between two stream events (both ``stream_idle_timeout_ms``, 120 s), enforced here around
  each event the client yields.

A server that accepts the connection and never answers is retried after the idle limit instead
of after the HTTP client's overall 10 minutes, and the retry message names the limit it hit.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass

from agent_cli.models.base import StreamEvent
from agent_cli.models.errors import TransientError


@dataclass(frozen=True, slots=True)
class StreamLimits:
    connect_s: float = 10.0
    idle_s: float = 120.0  # to the first event, and between events

    @classmethod
    def from_ms(cls, connect_ms: int, idle_ms: int) -> StreamLimits:
        return cls(connect_ms / 1000, idle_ms / 1000)

    def connect_error(self, exc: BaseException, url: str) -> TransientError | None:
        """The retry reason when ``exc`` is the HTTP client giving up on connecting, else None."""
        cause: BaseException | None = exc
        while cause is not None:
            if type(cause).__name__ == "ConnectTimeout":
                limit = seconds(self.connect_s)
                return TransientError(f"could not connect to {url} within {limit} (model_connect_timeout_ms)")
            cause = cause.__cause__ or cause.__context__
        return None


async def within_limits(events: AsyncIterator[StreamEvent], limits: StreamLimits) -> AsyncIterator[StreamEvent]:
    """``events``, failing with a ``TransientError`` that names the limit when the first event, or
    the next one, takes longer than ``limits.idle_s``. The timer runs only while waiting for the
    server, never while the consumer handles an event."""
    iterator = aiter(events)
    first = True
    try:
        while True:
            timer = asyncio.timeout(limits.idle_s)
            try:
                async with timer:
                    event = await anext(iterator)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if not timer.expired():
                    raise  # the HTTP client's own timeout, not ours
                if first:
                    raise TransientError(
                        f"no response from the model within {seconds(limits.idle_s)} (stream_idle_timeout_ms)"
                    ) from None
                raise TransientError(
                    f"the model's stream stalled: nothing for {seconds(limits.idle_s)} (stream_idle_timeout_ms)"
                ) from None
            first = False
            yield event
    finally:
        closer = getattr(iterator, "aclose", None)
        if closer is not None:
            await closer()


def seconds(value: float) -> str:
    return f"{value:g} s"
