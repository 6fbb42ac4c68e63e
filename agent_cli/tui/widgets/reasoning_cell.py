"""The model's reasoning: dimmed, open while it streams, folded to one line once the answer starts.

Enter or a click unfolds it again. One widget, so that it stays cheap in long transcripts.
"""

from __future__ import annotations

from textual import events
from textual.content import Content
from textual.reactive import reactive
from textual.widgets import Static

REFRESH_SECONDS = 0.05


class ReasoningCell(Static, can_focus=True):
    DEFAULT_CSS = """
    ReasoningCell { height: auto; margin: 0 0 1 0; padding: 0 1; color: $text-muted; text-style: italic; }
    ReasoningCell:focus { background: $boost; }
    """

    expanded: reactive[bool] = reactive(True)

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._parts: list[str] = [text] if text else []
        self._scheduled = False
        self.done = False

    def on_mount(self) -> None:
        self._refresh_view()

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def append(self, delta: str) -> None:
        self._parts.append(delta)
        if not self._scheduled:  # coalesce fast deltas into one repaint
            self._scheduled = True
            self.set_timer(REFRESH_SECONDS, self._refresh_view)

    def finish(self, text: str | None = None) -> None:
        if text:
            self._parts = [text]
        self.done = True
        self.expanded = False
        self._refresh_view()

    def _refresh_view(self) -> None:
        self._scheduled = False
        body = self.text.strip()
        if not self.done:
            title = "▼ thinking…"
        else:
            lines = body.count("\n") + 1 if body else 0
            title = f"{'▼' if self.expanded else '▶'} thought ({lines} line{'s' if lines != 1 else ''})"
        if self.expanded and body:
            self.update(Content.assemble((title, "bold"), "\n", body))
        else:
            self.update(Content.styled(title, "bold"))

    def watch_expanded(self) -> None:
        if self.is_mounted:
            self._refresh_view()

    def on_click(self, event: events.Click) -> None:
        if self.done:
            self.expanded = not self.expanded

    def on_key(self, event: events.Key) -> None:
        if event.key == "enter" and self.done:  # a space is typing: it goes to the composer
            event.stop()
            self.expanded = not self.expanded
