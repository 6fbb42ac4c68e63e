"""Counts the layout and paint work Textual does per widget, for tests and bench/tui_stream.py.

Time on a shared machine varies by tens of percent; these counts do not. While ``counting()`` is
active, every call of Textual's own methods below is counted (and still runs):

- ``Compositor.reflow``: a layout of the whole screen (``layouts``), and how many widgets it
  placed (``placed``; ``placed_watched`` of them among ``watched``): a layout visits every
  widget in the tree, on screen or not;
- ``Widget.get_content_height``: a widget's height computed again (Textual caches it per width,
  so this runs only when the widget or its width changed);
- ``Widget._render``: a widget's content rendered again (for its height, or for lines missing
  from its line cache);
- ``Widget.render_lines``: a widget painted (its lines taken for the screen).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

from textual._compositor import Compositor
from textual.widget import Widget


class RenderWork:
    def __init__(self, watched: set[Widget] | None = None) -> None:
        self.watched = watched or set()
        self.layouts = 0
        self.placed = 0
        self.placed_watched = 0
        self.heights: Counter[Widget] = Counter()
        self.renders: Counter[Widget] = Counter()
        self.paints: Counter[Widget] = Counter()

    @contextmanager
    def counting(self) -> Iterator[RenderWork]:
        reflow, content_height, render, render_lines = (
            Compositor.reflow,
            Widget.get_content_height,
            Widget._render,
            Widget.render_lines,
        )
        work = self

        def counted_reflow(compositor, parent, size):
            result = reflow(compositor, parent, size)
            work.layouts += 1
            work.placed += len(compositor._full_map)
            work.placed_watched += len(work.watched.intersection(compositor._full_map))
            return result

        def counted_height(widget, container, viewport, width):
            work.heights[widget] += 1
            return content_height(widget, container, viewport, width)

        def counted_render(widget):
            work.renders[widget] += 1
            return render(widget)

        def counted_lines(widget, crop):
            work.paints[widget] += 1
            return render_lines(widget, crop)

        Compositor.reflow, Widget.get_content_height, Widget._render, Widget.render_lines = (
            counted_reflow,
            counted_height,
            counted_render,
            counted_lines,
        )
        try:
            yield self
        finally:
            Compositor.reflow, Widget.get_content_height, Widget._render, Widget.render_lines = (
                reflow,
                content_height,
                render,
                render_lines,
            )

    def heights_of(self, widgets: Iterable[Widget]) -> int:
        return sum(self.heights[widget] for widget in widgets)

    def renders_of(self, widgets: Iterable[Widget]) -> int:
        return sum(self.renders[widget] for widget in widgets)

    def paints_of(self, widgets: Iterable[Widget]) -> int:
        return sum(self.paints[widget] for widget in widgets)


def widgets_of(cells: Iterable[Widget]) -> set[Widget]:
    """The cells and every widget inside them."""
    return {widget for cell in cells for widget in cell.walk_children(with_self=True)}
