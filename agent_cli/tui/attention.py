"""Getting the user's attention when the agent waits for them, and the terminal's title.

- The title says the session (its first prompt) and its state: working, waiting for approval,
  waiting for you. The title the terminal had is pushed when the app starts and popped at the end.
- Terminal notifications (OSC 9, OSC 777 or the bell) when a turn ends or an approval waits
  **while the terminal is not focused**: Textual turns on focus reporting, and a terminal that never
  reports losing focus is never notified. ``[tui] notifications`` = true (default), false, or a
  list of ``agent-turn-complete`` / ``approval-requested``; ``notification_method`` = auto (OSC
  777 where the terminal is known to want it, else OSC 9), osc9, osc777 or bell (noisy: never the
  default).
- The Notification hook's ``idle_prompt``: the composer has been left alone for 60 s after a turn.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from textual.timer import Timer

from agent_cli import events as ev
from agent_cli.session.hook_events import IDLE_SECONDS
from agent_cli.terminal_text import terminal_safe

KINDS = ("agent-turn-complete", "approval-requested")
METHODS = ("auto", "osc9", "osc777", "bell")
TITLE_CHARS = 40
PUSH_TITLE, POP_TITLE = "\x1b[22;0t", "\x1b[23;0t"


def notification_settings(tui: Any) -> tuple[frozenset[str], str]:
    """(the kinds that notify, the method) from the ``[tui]`` table."""
    tui = tui if isinstance(tui, dict) else {}
    wanted = tui.get("notifications", True)
    kinds = frozenset(
        KINDS if wanted is True else [k for k in wanted if k in KINDS] if isinstance(wanted, list) else []
    )
    method = tui.get("notification_method", "auto")
    return kinds, method if method in METHODS else "auto"


def auto_method(env: dict[str, str]) -> str:
    """OSC 777 for the terminals that show it and not OSC 9 (rxvt, foot, Ghostty do both), else OSC 9."""
    term, program = env.get("TERM", ""), env.get("TERM_PROGRAM", "").lower()
    return "osc777" if term.startswith(("rxvt", "foot")) or program == "ghostty" else "osc9"


def one_line(text: str, limit: int) -> str:
    """Printable, on one line, at most ``limit`` characters: nothing in it can end the sequence."""
    flat = " ".join(terminal_safe(text).replace("\x07", "").replace("\x1b", "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def notification_sequence(method: str, title: str, body: str) -> str:
    title, body = one_line(title, 60), one_line(body, 200)
    if method == "bell":
        return "\x07"
    if method == "osc777":
        return f"\x1b]777;notify;{title.replace(';', ',')};{body}\x07"
    return f"\x1b]9;{title}: {body}\x07"


class Attention:
    """The app's side of it; ``write`` sends a sequence to the terminal."""

    def __init__(self, config_tui: Any, write: Callable[[str], None], set_timer: Callable[..., Timer]):
        self.kinds, method = notification_settings(config_tui)
        self.method = auto_method(dict(os.environ)) if method == "auto" else method
        self.write = write
        self.set_timer = set_timer
        self.focused = True  # until the terminal says otherwise
        self.name = ""  # the session's first prompt
        self.state = ""
        self.on_idle: Callable[[], None] = lambda: None  # Notification hooks, idle_prompt
        self._idle: Timer | None = None

    def start(self, name: str | None = None) -> None:
        """``name``: a resumed session's first prompt."""
        self.write(PUSH_TITLE)
        self.new_session(name)

    def stop(self) -> None:
        self.cancel_idle()
        self.write(POP_TITLE)

    def new_session(self, name: str | None = None) -> None:
        lines = (name or "").strip().splitlines()
        self.name = lines[0] if lines else ""
        self.set_state("ready")

    def set_state(self, state: str) -> None:
        self.state = state
        name = one_line(self.name, TITLE_CHARS)
        self.write(f"\x1b]2;{' · '.join(part for part in (name, state, 'agent') if part)}\x07")

    def observe(self, event: ev.Event) -> None:
        match event:
            case ev.UserMessage(text=text, typed=typed) if not self.name:
                self.new_session(typed or text)
                self.set_state("working")
            case ev.TurnStarted():
                self.cancel_idle()
                self.set_state("working")
            case ev.ApprovalRequest(tool=tool, summary=summary):
                self.set_state("waiting for approval")
                self.notify("approval-requested", "Approval needed", f"{tool}: {summary}")
            case ev.TurnComplete(last_message=answer):
                self.turn_ended()
                self.notify("agent-turn-complete", "Agent turn complete", answer or "done")
            case ev.TurnAborted() | ev.TurnFailed():
                self.turn_ended()

    def answered(self) -> None:
        """An approval was answered: the turn goes on."""
        if self.state == "waiting for approval":
            self.set_state("working")

    def turn_ended(self) -> None:
        self.set_state("waiting for you")
        self.cancel_idle()
        self._idle = self.set_timer(IDLE_SECONDS, self._idled)

    def touched(self) -> None:
        """The user is typing: the prompt is not idle."""
        if self._idle is not None:
            self.cancel_idle()
            self._idle = self.set_timer(IDLE_SECONDS, self._idled)

    def cancel_idle(self) -> None:
        if self._idle is not None:
            self._idle.stop()
            self._idle = None

    def _idled(self) -> None:
        self._idle = None
        self.on_idle()

    def notify(self, kind: str, title: str, body: str) -> None:
        if kind in self.kinds and not self.focused:
            self.write(notification_sequence(self.method, title, body))
