"""Input a front end adds to the running model turn (``Steer``; Codex's ``turn/steer``).

It is open while :meth:`Session.turn` runs a model turn. The turn takes what waits before each
request, and a turn about to end goes on while something waits, so nothing put here while it
is open is lost; what a failed or interrupted turn leaves is handed back when it closes.
"""

from __future__ import annotations

from agent_cli.items import Image

Steered = tuple[str, tuple[Image, ...]]  # the text and its images


class Inbox:
    def __init__(self) -> None:
        self._open = False
        self._waiting: list[Steered] = []

    def open(self) -> None:
        self._open = True

    def close(self) -> list[Steered]:
        """No more input for this turn; returns what it did not take."""
        self._open = False
        left, self._waiting = self._waiting, []
        return left

    def put(self, text: str, images: tuple[Image, ...] = ()) -> bool:
        """Add input for the running turn; False when no model turn runs to take it."""
        if not self._open:
            return False
        self._waiting.append((text, images))
        return True

    @property
    def waiting(self) -> bool:
        return bool(self._waiting)

    def take(self) -> list[Steered]:
        taken, self._waiting = self._waiting, []
        return taken
