"""The ``/resume`` picker: recent saved sessions, this directory's first; Enter resumes one.

Keyboard first: type to filter (prompt, directory or id), Up/Down to move, Enter to resume,
Esc to cancel. The screen only shows the list it is given and returns the chosen file's path.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from agent_cli.display import human_size, short_path  # as `agent sessions` shows them
from agent_cli.store.catalog import SessionSummary
from agent_cli.terminal_text import terminal_safe
from agent_cli.tui.formatting import one_line
from agent_cli.tui.screens.dialog import DialogScreen

NO_PROMPT = "(no prompt yet)"


def is_here(summary: SessionSummary, cwd: Path | str) -> bool:
    """Started in this directory, or in one of the agent's worktrees of the repository here."""
    return summary.cwd == str(cwd) or (summary.worktree or {}).get("repository") == str(cwd)


def ordered(sessions: Sequence[SessionSummary], cwd: Path | str) -> list[SessionSummary]:
    """This directory's sessions (its worktrees' too) first, each group most recent first (as given)."""
    here = [s for s in sessions if is_here(s, cwd)]
    return here + [s for s in sessions if not is_here(s, cwd)]


def age(updated: float, now: float | None = None) -> str:
    """'just now', '5 min ago', '3 h ago', else the date and time."""
    seconds = (time.time() if now is None else now) - updated
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)} min ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)} h ago"
    return time.strftime("%Y-%m-%d %H:%M", time.localtime(updated))


def matches(summary: SessionSummary, query: str) -> bool:
    wanted = query.lower().split()
    haystack = f"{summary.first_prompt or ''} {summary.cwd} {summary.id}".lower()
    return all(word in haystack for word in wanted)


def row(summary: SessionSummary, here: bool, width: int = 100) -> Content:
    """Two lines: the first prompt, then when, where, size and id (dimmed)."""
    prompt = one_line(terminal_safe(summary.first_prompt or NO_PROMPT), width)
    worktree = (summary.worktree or {}).get("name")
    if worktree:
        where = f"worktree {terminal_safe(worktree)}"
    else:
        where = "this directory" if here else terminal_safe(short_path(summary.cwd, 40))
    details = f"{age(summary.updated)} · {where} · {human_size(summary.size)} · {summary.short_id}"
    return Content.assemble((prompt, "bold" if summary.first_prompt else "italic"), "\n", (details, "dim"))


class SessionPickerScreen(DialogScreen[Path | None]):
    DEFAULT_CSS = """
    SessionPickerScreen { align: center middle; }
    SessionPickerScreen > #dialog { border: thick $primary; }
    SessionPickerScreen #filter { margin: 0 0 1 0; }
    SessionPickerScreen #sessions { height: auto; max-height: 24; border: none; background: $surface; }
    SessionPickerScreen #sessions > .option-list--option { padding: 0 1; }
    SessionPickerScreen #empty { display: none; color: $text-muted; padding: 0 1; }
    SessionPickerScreen.-empty #empty { display: block; }
    SessionPickerScreen.-empty #sessions { display: none; }
    SessionPickerScreen #keys { color: $text-muted; margin: 1 0 0 0; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "cancel", show=False),
        Binding("up", "move('cursor_up')", "up", show=False, priority=True),
        Binding("down", "move('cursor_down')", "down", show=False, priority=True),
        Binding("pageup", "move('page_up')", "page up", show=False, priority=True),
        Binding("pagedown", "move('page_down')", "page down", show=False, priority=True),
    ]

    def __init__(self, sessions: Sequence[SessionSummary], cwd: Path | str) -> None:
        super().__init__()
        self.cwd = str(cwd)
        self.sessions = ordered(sessions, cwd)
        self.shown: list[SessionSummary] = list(self.sessions)

    def compose(self) -> ComposeResult:
        with Vertical(id="dialog"):
            yield Static(f"Resume a session ({len(self.sessions)} recent, this directory's first)", id="title")
            yield Input(placeholder="type to filter by prompt, directory or id", id="filter")
            yield OptionList(*self._options(), id="sessions")
            yield Static("no session matches", id="empty")
            yield Static("↑↓ move · enter resume · esc cancel", id="keys")

    def on_mount(self) -> None:
        self.query_one("#filter", Input).focus()  # typing filters; the arrows move the list
        self.query_one("#sessions", OptionList).highlighted = 0 if self.shown else None

    def _options(self) -> list[Option]:
        return [Option(row(s, is_here(s, self.cwd)), id=str(index)) for index, s in enumerate(self.shown)]

    @on(Input.Changed, "#filter")
    def filter_sessions(self, event: Input.Changed) -> None:
        self.shown = [s for s in self.sessions if matches(s, event.value)]
        options = self.query_one("#sessions", OptionList)
        options.clear_options()
        options.add_options(self._options())
        options.highlighted = 0 if self.shown else None
        self.set_class(not self.shown, "-empty")

    def action_move(self, how: str) -> None:
        """Move in the list while the filter keeps the focus (``how``: an OptionList action)."""
        getattr(self.query_one("#sessions", OptionList), f"action_{how}")()

    @property
    def selected(self) -> SessionSummary | None:
        index = self.query_one("#sessions", OptionList).highlighted
        return self.shown[index] if index is not None and 0 <= index < len(self.shown) else None

    @on(Input.Submitted, "#filter")
    def resume_highlighted(self) -> None:
        if (summary := self.selected) is not None:
            self.dismiss(summary.path)

    @on(OptionList.OptionSelected, "#sessions")
    def resume_clicked(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(self.shown[event.option_index].path)

    def action_cancel(self) -> None:
        self.dismiss(None)
