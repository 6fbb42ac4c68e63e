"""Messages typed while a turn runs, waiting to be sent when it ends.

Up in an empty composer takes the last one back for editing; Ctrl+S sends them now (the running
turn is interrupted first)."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from agent_cli.tui.formatting import one_line


class QueuedMessages(Static):
    DEFAULT_CSS = """
    QueuedMessages { display: none; height: auto; margin: 0 1; padding: 0 1; color: $text-muted; }
    QueuedMessages.-visible { display: block; }
    """

    def show_queue(self, queued: list[str]) -> None:
        self.set_class(bool(queued), "-visible")
        parts: list[str | tuple[str, str]] = []
        for index, text in enumerate(queued):
            if index:
                parts.append("\n")
            parts += [("⏳ queued  ", "$text-warning"), one_line(text, 160)]
        if queued:
            parts.append(("   ↑ edit · ctrl+s send now", "$text-muted italic"))
        self.update(Content.assemble(*parts))
