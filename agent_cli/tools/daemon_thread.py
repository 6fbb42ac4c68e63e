"""Blocking work of a tool (reading a huge file, walking a tree) in a daemon thread.

``asyncio.to_thread`` uses the loop's default executor, whose threads both ``asyncio.run`` and
the interpreter wait for at exit: a tool stopped by Ctrl+C but still reading a 1 TB file would
keep the process alive for minutes. A daemon thread does the same work and is simply abandoned
when the turn is stopped or the process ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def in_thread(func: Callable[..., T], *args: object) -> T:
    """``func(*args)`` in a new daemon thread; awaiting it can be cancelled at any time."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()

    def settle(outcome: Callable[[], None]) -> None:
        if not future.done():
            outcome()

    def work() -> None:
        try:
            result = func(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the awaiting task
            error = exc
            with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
                loop.call_soon_threadsafe(settle, lambda: future.set_exception(error))
            return
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(settle, lambda: future.set_result(result))

    threading.Thread(target=work, name=f"tool:{getattr(func, '__name__', 'work')}", daemon=True).start()
    return await future
