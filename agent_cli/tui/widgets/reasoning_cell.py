"""The model's reasoning: dimmed, open while it streams, collapsed once the answer starts."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Collapsible, Static

REFRESH_SECONDS = 0.05


class ReasoningCell(Collapsible):
    DEFAULT_CSS = """
    ReasoningCell { margin: 0 0 1 0; padding: 0; border: none; background: transparent; }
    ReasoningCell > CollapsibleTitle { color: $text-muted; text-style: italic; padding: 0 1; }
    ReasoningCell > Contents { padding: 0 0 0 3; }
    ReasoningCell Static { color: $text-muted; text-style: italic; }
    """

    def __init__(self, text: str = "") -> None:
        self._parts: list[str] = [text] if text else []
        self._body = Static(Content(text))
        self._scheduled = False
        self.done = False
        super().__init__(self._body, title="thinking…", collapsed=False)

    @property
    def text(self) -> str:
        return "".join(self._parts)

    def append(self, delta: str) -> None:
        self._parts.append(delta)
        if not self._scheduled:  # coalesce fast deltas into one repaint
            self._scheduled = True
            self.set_timer(REFRESH_SECONDS, self._refresh_body)

    def _refresh_body(self) -> None:
        self._scheduled = False
        self._body.update(Content(self.text.strip()))

    def finish(self, text: str | None = None) -> None:
        if text:
            self._parts = [text]
        self._refresh_body()
        self.done = True
        self.title = "thought"
        self.collapsed = True
