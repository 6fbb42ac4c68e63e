""" "waiting for the model… 30 s": progress while a request gets no answer.

The turn marks every stream event it receives; while none arrives, a ticker emits
:class:`~agent_cli.events.ModelWaiting` every few seconds, so the TUI's status line and exec's
progress show that the agent is waiting (and for how long), not hung.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import TypeVar

from agent_cli import events as ev

NOTICE_EVERY_S = 5.0
T = TypeVar("T")


class WaitNotices:
    def __init__(self, emit: Callable[[ev.Event], None], every_s: float):
        self.emit = emit
        self.every_s = every_s
        self._loop = asyncio.get_running_loop()
        self._last = self._loop.time()

    def seen(self) -> None:
        """Something arrived from the model: the wait starts again from zero."""
        self._last = self._loop.time()

    async def run(self) -> None:
        while True:
            waited = self._loop.time() - self._last
            await asyncio.sleep((int(waited // self.every_s) + 1) * self.every_s - waited)
            waited = self._loop.time() - self._last
            if waited >= self.every_s * 0.99:
                self.emit(ev.ModelWaiting(round(waited / self.every_s) * self.every_s))


async def with_wait_notices(events: AsyncIterator[T], emit: Callable[[ev.Event], None]) -> AsyncIterator[T]:
    """``events``, with :class:`~agent_cli.events.ModelWaiting` emitted while none arrives."""
    notices = WaitNotices(emit, NOTICE_EVERY_S)
    ticker = asyncio.create_task(notices.run())
    try:
        async for event in events:
            notices.seen()
            yield event
    finally:
        ticker.cancel()
