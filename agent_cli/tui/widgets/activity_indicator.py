"""The line above the composer while a turn runs: spinner, elapsed time, how to interrupt.

The timer only runs while busy, so an idle app does no work. ``clock`` is swappable so snapshot
tests can freeze time.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from agent_cli.tui.formatting import duration

FRAMES = "⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏"


class ActivityIndicator(Static):
    DEFAULT_CSS = """
    ActivityIndicator { display: none; height: 1; padding: 0 2; color: $text-muted; }
    ActivityIndicator.-busy { display: block; }
    """

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.clock: Callable[[], float] = time.monotonic
        self.label = "working"
        self.started = 0.0
        self._timer: Timer | None = None

    def start(self, label: str = "working") -> None:
        self.label = label
        self.started = self.clock()
        self.add_class("-busy")
        if self._timer is None:
            self._timer = self.set_interval(0.1, self.tick)
        self.tick()

    def set_label(self, label: str) -> None:
        self.label = label
        self.tick()

    async def say_now(self, label: str, within: float = 0.5) -> None:
        """Show ``label`` and wait until the screen has been painted with it (at most ``within``
        seconds: an app that is closing paints no more)."""
        self.set_label(label)
        painted: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.call_after_refresh(lambda: painted.done() or painted.set_result(None))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(painted, within)

    def stop(self) -> None:
        self.remove_class("-busy")
        if self._timer is not None:
            self._timer.stop()
            self._timer = None

    def tick(self) -> None:
        elapsed = max(0.0, self.clock() - self.started)
        frame = FRAMES[int(elapsed * 10) % len(FRAMES)]
        self.update(
            Content.assemble(
                (f"{frame} ", "$text-accent"),
                (self.label.capitalize(), "bold"),
                (f"  {duration(elapsed) if elapsed >= 10 else f'{int(elapsed)}s'}", ""),
                (" · esc to interrupt", "$text-muted"),
            ),
            layout=False,  # a fixed one-line widget: repaint it without laying out the screen
        )
