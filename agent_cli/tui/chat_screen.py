"""The app's main screen: the keys that act on the transcript and the composer under it.

Its bindings live here, not on the app, so a dialog on top (a modal screen) takes these keys for
itself: Esc denies an approval there, PageUp scrolls the dialog, Shift+Tab moves its focus. The
keys that also act over a dialog (Ctrl+C, Ctrl+D) stay on the app. The layout itself is the
app's ``compose``, which Textual mounts on this screen.
"""

from __future__ import annotations

from typing import ClassVar, Protocol

from textual import events
from textual.binding import Binding, BindingType
from textual.screen import Screen

from agent_cli.commands.conversation import Driven
from agent_cli.operations import Mode, Operation, RunCommand, SetMode, is_mode
from agent_cli.tui import draft_editor
from agent_cli.tui.rewinding import DoubleEscape
from agent_cli.tui.widgets.composer import Composer
from agent_cli.tui.widgets.tool_cell import ToolCell
from agent_cli.tui.widgets.transcript import Transcript


class ChatHost(Protocol):
    """What the keys reach in the app."""

    @property
    def conversation(self) -> Driven: ...
    @property
    def busy(self) -> bool: ...
    @property
    def transcript(self) -> Transcript: ...
    @property
    def composer(self) -> Composer: ...

    def send(self, text: str | Operation) -> None: ...
    def send_queued_now(self) -> None: ...
    def interrupt(self) -> None: ...


class ChatScreen(Screen[None]):
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "interrupt", show=False),
        Binding("shift+tab", "cycle_mode", "mode", show=False, priority=True),
        Binding("ctrl+s", "send_queued_now", "send now", show=False),
        Binding("ctrl+g", "edit_draft", "edit in $EDITOR", show=False, priority=True),
        Binding("ctrl+o", "expand_latest", "expand the latest tool output", show=False, priority=True),
        Binding("tab", "focus_next_cell", "focus", show=False),
        # The composer keeps focus; these scroll the transcript above it.
        Binding("pageup", "scroll_transcript('page_up')", "scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_transcript('page_down')", "scroll down", show=False, priority=True),
        Binding("ctrl+home", "scroll_transcript('home')", "top", show=False, priority=True),
        Binding("ctrl+end", "scroll_transcript('end')", "bottom", show=False, priority=True),
    ]

    def __init__(self, host: ChatHost) -> None:
        super().__init__()
        self.host = host
        self._escapes = DoubleEscape()  # Esc Esc on an empty composer opens /rewind

    def action_interrupt(self) -> None:
        """Esc: stop the running turn; twice on an empty composer with none running: /rewind."""
        host = self.host
        if host.busy:
            host.interrupt()
        elif not host.composer.text and self._escapes.pressed():
            host.send(RunCommand("rewind"))

    def action_cycle_mode(self) -> None:
        """Shift+Tab: agent → ask → plan → agent, the same ``SetMode`` a typed ``/mode`` is."""
        conversation = self.host.conversation
        modes: list[Mode] = [mode for mode in conversation.modes if is_mode(mode)]
        at = modes.index(conversation.mode) if conversation.mode in modes else -1
        self.host.send(SetMode(modes[(at + 1) % len(modes)]))

    def action_send_queued_now(self) -> None:
        """Ctrl+S: stop the running turn and send what is queued right after it."""
        self.host.send_queued_now()

    def action_edit_draft(self) -> None:
        """Ctrl+G: the draft in $VISUAL/$EDITOR (tui/draft_editor.py)."""
        self.run_worker(draft_editor.edit_draft(self.app), group="editor", exclusive=True, exit_on_error=False)

    def action_expand_latest(self) -> None:
        """Ctrl+O (Claude Code's key): expand or collapse the newest tool cell's output."""
        if cells := list(self.host.transcript.query(ToolCell)):
            cells[-1].expanded = not cells[-1].expanded
            if cells[-1].expanded:
                cells[-1].scroll_visible(animate=False)

    def action_toggle_tool_output(self) -> None:
        cells = list(self.host.transcript.query(ToolCell))
        expand = not any(cell.expanded for cell in cells)
        for cell in cells:
            cell.expanded = expand

    def action_focus_next_cell(self) -> None:
        """Tab from the composer goes to the newest tool cell, then to older ones, then back."""
        composer = self.host.composer
        cells = list(self.host.transcript.query(ToolCell))
        if self.focused is composer and cells:
            cells[-1].focus()
        elif cells and self.focused in cells:
            at = cells.index(self.focused)  # type: ignore[arg-type]
            (cells[at - 1] if at > 0 else composer).focus()
        else:
            self.focus_next()

    def action_scroll_transcript(self, where: str) -> None:
        transcript = self.host.transcript
        if where == "page_up":
            transcript.scroll_page_up(animate=False)
        elif where == "page_down":
            transcript.scroll_page_down(animate=False)
        elif where == "home":
            transcript.scroll_home(animate=False)
        else:
            transcript.follow()  # back to following the newest output

    def on_key(self, event: events.Key) -> None:
        """A letter typed while a transcript cell has focus goes to the composer, never nowhere."""
        composer = self.host.composer
        if self.focused is not composer and event.is_printable and event.character:
            event.stop()
            composer.focus()
            composer.insert(event.character)
