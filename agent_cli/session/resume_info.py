"""What a resume did (session/resume.py), for the front end to tell the user."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_cli import events as ev


@dataclass(frozen=True)
class ResumeInfo:
    """What a front end tells the user after a resume."""

    path: Path
    session_id: str
    restored_items: int
    closed_calls: int
    compactions: int
    environment_changed: tuple[str, ...]  # names of the fields that differ from last time
    warnings: tuple[str, ...]

    def events(self) -> list[ev.Event]:
        compacted = (
            f", compacted {self.compactions} time{'s' if self.compactions > 1 else ''}" if self.compactions else ""
        )
        notes = [f"continuing session {self.session_id} ({self.restored_items} items{compacted}) from {self.path}"]
        if self.closed_calls:
            notes.append(f"{self.closed_calls} tool call(s) interrupted last time were closed as aborted")
        if self.environment_changed:
            notes.append(f"environment changed since last time: {', '.join(self.environment_changed)}")
        return [ev.Notice("\n".join(notes), title="resume"), *(ev.Warning(w) for w in self.warnings)]
