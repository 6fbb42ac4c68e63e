"""Small helpers for driving the app with a Pilot."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable

KEY_NAMES = {"\n": "ctrl+j"}  # Textual maps other single characters to key names itself


async def type_text(pilot, text: str) -> None:
    """Type ``text`` key by key, as a user would."""
    await pilot.press(*(KEY_NAMES.get(char, char) for char in text))


async def wait_until(pilot, condition: Callable[[], bool], timeout: float = 10.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause(0.02)


async def wait_idle(pilot, timeout: float = 10.0) -> None:
    """Wait until no turn runs and nothing is queued, then let the screen settle."""
    app = pilot.app
    await wait_until(pilot, lambda: not app.busy and not app.queue, timeout, "the turn to end")
    await pilot.pause(0.05)
    await asyncio.sleep(0)


def screen_text(app) -> str:
    """What the terminal shows, as plain text."""
    strips = app.screen._compositor.render_strips()
    return "\n".join(strip.text.rstrip() for strip in strips)
