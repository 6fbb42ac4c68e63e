"""Waiting for something to happen, with a deadline: tests synchronise on conditions, never on a
fixed sleep that only hopes the other side is done by then."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")
POLL = 0.02


def wait_for(condition: Callable[[], T], within: float = 30.0, what: str = "the condition") -> T:
    """``condition()``'s first true value, polled until ``within`` seconds have passed."""
    deadline = time.monotonic() + within
    while True:
        if value := condition():
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}")
        time.sleep(POLL)


async def until(condition: Callable[[], T], within: float = 30.0, what: str = "the condition") -> T:
    """As :func:`wait_for`, without blocking the event loop."""
    deadline = time.monotonic() + within
    while True:
        if value := condition():
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {within:g} s waiting for {what}")
        await asyncio.sleep(POLL)
