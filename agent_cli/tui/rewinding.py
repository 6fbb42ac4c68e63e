"""The TUI's side of /rewind: the picker, Esc Esc on an empty composer, and after a rewind of the
conversation the transcript shown again from the history with the prompt back in the composer."""

from __future__ import annotations

import time

from agent_cli import events as ev
from agent_cli.operations import Rewind, is_rewind_part
from agent_cli.store.replay import replay_events
from agent_cli.tui.app_host import AppHost
from agent_cli.tui.screens.rewind_picker import RewindPickerScreen
from agent_cli.tui.sent_input import QueuedOperation
from agent_cli.tui.session_switching import banner

DOUBLE_ESCAPE_SECONDS = 0.8


class DoubleEscape:
    """Two Esc presses close together on an empty composer, with no turn running."""

    def __init__(self) -> None:
        self._last = float("-inf")

    def pressed(self) -> bool:
        now = time.monotonic()
        twice, self._last = now - self._last < DOUBLE_ESCAPE_SECONDS, now
        if twice:
            self._last = float("-inf")
        return twice


async def pick_and_rewind(app: AppHost) -> None:
    """``/rewind`` without arguments: the picker; the choice runs as a ``Rewind`` next."""
    entries = app.session.checkpoints.prompts()
    app.activity.stop()
    choice = await app.push_screen_wait(RewindPickerScreen(entries))
    if choice is None:
        return
    number, mode = choice
    if is_rewind_part(mode):
        app.queue.insert(0, QueuedOperation(Rewind(number, mode)))  # sent as soon as this command's worker ends


async def show_rewound(app: AppHost, event: ev.Rewound) -> None:
    """The conversation went back: show it as it now is, with the prompt ready to edit."""
    if event.prompt is None:
        return
    await app.transcript.clear()
    await app.transcript.add(banner(app))
    await app.renderer.replay(replay_events(app.session.history.items))
    app.composer.load_text(event.prompt)
    app.composer.move_cursor(app.composer.document.end)
    app.status.set_tokens(app.session.token_count_event())
    app.status.set_context_event("")  # "compacted 8.6k → 4.5k" may describe a context that is gone
