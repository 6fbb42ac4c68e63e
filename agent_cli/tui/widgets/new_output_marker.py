"""The line under a transcript scrolled up while new output arrived below the view."""

from __future__ import annotations

from textual.widgets import Static

TEXT = "↓ new output below · ctrl+end to follow"


class NewOutputMarker(Static):
    DEFAULT_CSS = """
    NewOutputMarker { height: 1; width: 100%; display: none; color: $text-accent; text-style: bold;
                      text-align: center; background: $boost; }
    NewOutputMarker.-shown { display: block; }
    """

    def __init__(self) -> None:
        super().__init__(TEXT)

    def show(self, shown: bool) -> None:
        self.set_class(shown, "-shown")

    @property
    def shown(self) -> bool:
        return self.has_class("-shown")
