"""What the user typed before, kept in ``$AGENT_HOME/history.jsonl`` across sessions.

One JSON object per line: ``{"ts": 1700000000, "text": "..."}``. A damaged line is skipped,
never fatal: the history is a convenience.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from agent_cli.paths import open_private

MAX_LOADED = 1000


class InputHistory:
    """Entries oldest first, with a cursor for Up/Down browsing."""

    def __init__(self, path: Path | None):
        self.path = path
        self.entries: list[str] = self._load()
        self._index: int | None = None  # None: not browsing
        self._draft = ""

    def _load(self) -> list[str]:
        if self.path is None or not self.path.is_file():
            return []
        entries: list[str] = []
        try:
            lines = self.path.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            return []
        for line in lines[-MAX_LOADED:]:
            try:
                text = json.loads(line).get("text")
            except (json.JSONDecodeError, AttributeError):
                continue
            if isinstance(text, str) and text.strip():
                entries.append(text)
        return entries

    def add(self, text: str) -> None:
        """Remember ``text`` (not twice in a row) and append it to the file."""
        self.reset()
        if not text.strip() or (self.entries and self.entries[-1] == text):
            return
        self.entries.append(text)
        if self.path is None:
            return
        try:
            with open_private(self.path, "a") as handle:  # prompts may quote secrets
                handle.write(json.dumps({"ts": int(time.time()), "text": text}, ensure_ascii=False) + "\n")
        except OSError:
            pass  # a read-only home must not stop the user from typing

    def reset(self) -> None:
        self._index = None
        self._draft = ""

    @property
    def browsing(self) -> bool:
        return self._index is not None

    def previous(self, current: str) -> str | None:
        """The entry before the one shown; ``current`` is kept as the draft. None at the start."""
        if not self.entries:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(self.entries)
        if self._index == 0:
            return None
        self._index -= 1
        return self.entries[self._index]

    def next(self) -> str | None:
        """The entry after the one shown, then the draft. None when not browsing."""
        if self._index is None:
            return None
        self._index += 1
        if self._index >= len(self.entries):
            draft = self._draft
            self.reset()
            return draft
        return self.entries[self._index]
