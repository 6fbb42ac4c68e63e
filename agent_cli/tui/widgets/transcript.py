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

from agent_cli.tui.widgets.new_output_marker import NewOutputMarker
from agent_cli.tui.widgets.pruned_marker import PrunedMarker

MAX_CELLS = 100
LIVE_CELLS = 8
PRUNE_BATCH = 20
BELOW_CHECK_SECONDS = 0.25  # how often "new output below" is looked for while scrolled up


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
        self.below = NewOutputMarker()  # the app places it under the transcript
        self._seen_height = 0  # the content's height when the user last saw the bottom
        self._scrolled_away = False  # by the user, since the view was last at the bottom

    def on_mount(self) -> None:
        self.anchor()
        self.set_interval(BELOW_CHECK_SECONDS, self.check_below)

    @property
    def at_bottom(self) -> bool:
        # Content shorter than the view leaves nothing below, whatever ``scroll_y`` says: Textual
        # keeps an anchored view's ``scroll_y`` negative then (content bottom minus view height).
        return self.max_scroll_y <= 0 or self.scroll_y >= self.max_scroll_y - 1

    def release_anchor(self) -> None:
        """The user scrolled away from the bottom (Textual calls this for their scrolls only)."""
        super().release_anchor()
        self._scrolled_away = True

    def check_below(self) -> None:
        """Show the marker when the content grew under a view the user scrolled up; while the
        view follows the bottom, output is never below it for longer than one layout."""
        height = self.virtual_size.height
        if self.at_bottom:
            self._seen_height = height
            self._scrolled_away = False
            self.below.show(False)
        elif self._scrolled_away and height > self._seen_height:
            self.below.show(True)

    def follow(self) -> None:
        """Back to the newest output, and stay there as it grows (sending a prompt does it)."""
        self.scroll_end(animate=False, immediate=True)
        self.below.show(False)

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        if self.is_mounted and self.at_bottom:
            self.below.show(False)

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
