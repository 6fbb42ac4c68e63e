"""`agent resume` with no id: the app's own session picker (``/resume``'s, searchable), on its own
before any session exists, instead of a numbered list to type a number into."""

from __future__ import annotations

from pathlib import Path

from textual.app import App

from agent_cli.store.catalog import SessionSummary, list_sessions
from agent_cli.tui.resuming import PICKER_SIZE
from agent_cli.tui.screens.session_picker import SessionPickerScreen


class ResumePickerApp(App[Path | None]):
    def __init__(self, sessions: list[SessionSummary], cwd: Path) -> None:
        super().__init__()
        self.sessions, self.cwd = sessions, cwd

    def on_mount(self) -> None:
        self.push_screen(SessionPickerScreen(self.sessions, self.cwd), callback=self.exit)


def pick_session_to_resume(home: Path, cwd: Path) -> Path | None:
    """The session file picked (None: the user left the picker); the caller checks there is one."""
    return ResumePickerApp(list_sessions(home, limit=PICKER_SIZE), cwd).run()
