"""The user's status line under the composer: Claude Code's ``statusLine`` command, run with the
session's JSON, its first line shown with its ANSI colours (as Rich Text, escapes that move the
cursor or retitle the terminal dropped).

:meth:`StatusLine.request` asks for a fresh line when the session changed; runs are at most one
at a time and at least :data:`MIN_INTERVAL` seconds apart, the last request always gets its run.
Hidden when no status line is configured or the command printed nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from rich.text import Text
from textual.timer import Timer
from textual.widgets import Static

from agent_cli.status_line.runner import run_status_line
from agent_cli.status_line.setting import StatusLineSetting

MIN_INTERVAL = 0.3  # seconds between runs, Claude Code's throttle


class StatusLine(Static):
    DEFAULT_CSS = """
    StatusLine { display: none; height: 1; padding: 0 1; }
    StatusLine.-shown { display: block; }
    """

    def __init__(self, setting: StatusLineSetting | None, context: Callable[[], tuple[dict[str, Any], Any, Any]]):
        """``context()`` gives (the session JSON, the folder to run in, the environment)."""
        super().__init__("", markup=False)
        self.setting = setting
        self.context = context
        self.line = ""  # the last line shown, plain text
        self.problem: str | None = None  # why the last run showed nothing
        self.runs = 0
        self._line_wanted = False
        self._line_running = False
        self._line_last = float("-inf")
        self._line_timer: Timer | None = None

    def request(self) -> None:
        if self.setting is None:
            return
        self._line_wanted = True
        if self._line_running or self._line_timer is not None:
            return  # the running one, or the one waiting, picks the request up
        wait = max(0.001, self._line_last + MIN_INTERVAL - time.monotonic())  # a timer of 0 is refused
        self._line_timer = self.set_timer(wait, self._start)

    def _start(self) -> None:
        self._line_timer = None
        if not self._line_wanted or self._line_running or self.setting is None:
            return
        self._line_wanted, self._line_running = False, True
        self.run_worker(self._run(self.setting), group="status-line")

    async def _run(self, setting: StatusLineSetting) -> None:
        try:
            payload, cwd, env = self.context()
            line, self.problem = await run_status_line(setting.command, payload, cwd, env)
        finally:
            self._line_running = False
            self._line_last = time.monotonic()
            self.runs += 1
        self.show(" " * setting.padding + line)
        if self._line_wanted:
            self.request()

    def show(self, line: str) -> None:
        text = Text.from_ansi(line, no_wrap=True, end="")
        text.truncate(max(1, self.size.width or 200), overflow="ellipsis")
        self.line = text.plain
        self.update(text)
        self.set_class(bool(text.plain.strip()), "-shown")
