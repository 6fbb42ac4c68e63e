"""The scrolling transcript: one child widget per cell, anchored to the bottom.

Every widget costs time in each layout of the screen, so long sessions are kept cheap in two
steps: cells older than the newest ``live_cells`` are frozen (a cell with a ``freeze()`` method
returns a single-widget stand-in that replaces it), and beyond ``max_cells`` the oldest cells are dropped, in
batches so that dropping costs one layout per batch. The conversation itself lives in the
session, so pruning the view loses nothing the model sees.
"""

from __future__ import annotations

from textual.containers import VerticalScroll
from textual.widget import Widget

from agent_cli.tui.widgets.pruned_marker import PrunedMarker

MAX_CELLS = 100
LIVE_CELLS = 8
PRUNE_BATCH = 20


class Transcript(VerticalScroll, can_focus=False):
    DEFAULT_CSS = """
    /* The scrollbar's column is kept even while nothing scrolls: when the first long answer made
       it appear, every cell was laid out and rendered again one column narrower, mid-stream. */
    Transcript { height: 1fr; padding: 0 1; scrollbar-size-vertical: 1; scrollbar-gutter: stable; }
    """

    def __init__(self, max_cells: int = MAX_CELLS, live_cells: int = LIVE_CELLS, **kwargs) -> None:
        super().__init__(**kwargs)
        self.max_cells = max_cells
        self.live_cells = live_cells
        self._marker: PrunedMarker | None = None
        self._cells: list[Widget] = []  # in order, without the marker

    def on_mount(self) -> None:
        self.anchor()

    @property
    def cells(self) -> list[Widget]:
        return list(self._cells)

    async def add(self, cell: Widget) -> Widget:
        """Append ``cell``, freeze the one that just left the live window, drop the oldest."""
        await self.mount(cell)
        self._cells.append(cell)
        if len(self._cells) > self.live_cells:
            await self._freeze(len(self._cells) - self.live_cells - 1)
        if len(self._cells) > self.max_cells + PRUNE_BATCH:
            await self._prune(len(self._cells) - self.max_cells)
        return cell

    async def _freeze(self, index: int) -> None:
        """Swap the cell at ``index`` for its single-widget form, if it has one."""
        old = self._cells[index]
        freeze = getattr(old, "freeze", None)
        replacement = freeze() if freeze is not None else None
        if replacement is None:
            return
        with self.app.batch_update():
            await self.mount(replacement, after=old)
            await old.remove()
        self._cells[index] = replacement

    async def discard(self, cell: Widget) -> None:
        """Remove one cell (a streamed attempt that is being retried)."""
        if cell in self._cells:
            self._cells.remove(cell)
        await cell.remove()

    async def _prune(self, count: int) -> None:
        old, self._cells = self._cells[:count], self._cells[count:]
        if self._marker is None:
            self._marker = PrunedMarker()
            await self.mount(self._marker, before=0)
        self._marker.add(len(old))
        await self.remove_children(old)

    async def clear(self) -> None:
        self._marker = None
        self._cells = []
        await self.remove_children()
