"""The scrolling transcript: one child widget per cell, anchored to the bottom.

Long sessions stay fast because only the newest ``max_cells`` cells are kept as widgets; the
conversation itself lives in the session, so pruning the view loses nothing the model sees.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

MAX_CELLS = 200


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


class Transcript(VerticalScroll, can_focus=False):
    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; }
    """

    def __init__(self, max_cells: int = MAX_CELLS, **kwargs) -> None:
        super().__init__(**kwargs)
        self.max_cells = max_cells
        self._marker: PrunedMarker | None = None

    def on_mount(self) -> None:
        self.anchor()

    @property
    def cells(self) -> list[Widget]:
        return [child for child in self.children if not isinstance(child, PrunedMarker)]

    async def add(self, cell: Widget) -> Widget:
        """Append ``cell`` and drop the oldest cells beyond the limit."""
        await self.mount(cell)
        cells = self.cells
        excess = len(cells) - self.max_cells
        if excess > 0:
            await self._prune(cells[:excess])
        return cell

    async def _prune(self, old: list[Widget]) -> None:
        if self._marker is None:
            self._marker = PrunedMarker()
            await self.mount(self._marker, before=0)
        self._marker.add(len(old))
        await self.remove_children(old)

    async def clear(self) -> None:
        self._marker = None
        await self.remove_children()
