"""`agent attach`'s picker: the sessions live in the host, each with what it is doing (running,
waiting for approval, idle), the most recently active first; Enter attaches to one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.display import short_path
from agent_cli.remote.live import LiveSession
from agent_cli.terminal_text import terminal_safe
from agent_cli.tui.formatting import one_line
from agent_cli.tui.screens.dialog import DialogScreen
from agent_cli.tui.screens.session_picker import NO_PROMPT, age

STATE_STYLE = {"running": "bold $success", "waiting for approval": "bold $warning", "idle": "dim"}


def row(live: LiveSession, width: int = 100) -> Content:
    """Two lines: what it is doing and its first prompt, then when, where and its id (dimmed)."""
    prompt = one_line(terminal_safe(live.name or live.preview or NO_PROMPT), width)
    details = f"{age(live.updated)} · {terminal_safe(short_path(live.cwd, 40))} · {live.short_id}"
    return Content.assemble(
        Content.styled(f"{live.state:<21}", STATE_STYLE.get(live.state, "")), (prompt, "bold"), "\n", (details, "dim")
    )


class LivePickerScreen(DialogScreen[str | None]):
    DEFAULT_CSS = """
    LivePickerScreen { align: center middle; }
    LivePickerScreen > #dialog { border: thick $primary; }
    LivePickerScreen #sessions { height: auto; max-height: 24; border: none; background: $surface; }
    LivePickerScreen #sessions > .option-list--option { padding: 0 1; }
    LivePickerScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "cancel", "cancel", show=False)]

    def __init__(self, sessions: Sequence[LiveSession]) -> None:
        super().__init__()
        self.sessions = list(sessions)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"Attach to a session running in the host ({len(self.sessions)})", id="title")
            yield OptionList(*(Option(row(live), id=live.id) for live in self.sessions), id="sessions")
            yield Static("↑↓ move · enter attach · esc cancel", id="keys")

    def on_mount(self) -> None:
        options = self.query_one("#sessions", OptionList)
        options.highlighted = 0
        options.focus()

    @on(OptionList.OptionSelected, "#sessions")
    def attach(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.sessions[event.option_index].id)

    def action_cancel(self) -> None:
        self.dismiss(None)
