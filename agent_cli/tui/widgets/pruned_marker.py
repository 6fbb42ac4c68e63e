"""The line at the top of a pruned transcript: how many earlier cells were dropped from the view."""

from __future__ import annotations

from textual.widgets import Static


class PrunedMarker(Static):
    """Says how many earlier cells were dropped from the view."""

    DEFAULT_CSS = """
    PrunedMarker { color: $text-muted; text-style: italic; margin: 0 0 1 2; }
    """

    def __init__(self) -> None:
        super().__init__("")
        self.count = 0

    def add(self, count: int) -> None:
        self.count += count
        self.update(f"… {self.count} earlier cells are not shown (the conversation still has them)")
