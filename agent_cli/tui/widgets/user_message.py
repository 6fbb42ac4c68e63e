"""A message the user sent."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static


class UserMessage(Static):
    DEFAULT_CSS = """
    UserMessage {
        margin: 1 0 1 0;
        padding: 0 1;
        border-left: thick $primary;
        background: $boost;
        color: $text;
    }
    """

    def __init__(self, text: str) -> None:
        super().__init__(Content(text.rstrip()))
        self.text = text
