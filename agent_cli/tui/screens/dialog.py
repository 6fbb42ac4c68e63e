"""The frame every modal dialog shares: a bordered panel with a bold title."""

from __future__ import annotations

from textual.screen import ModalScreen, ScreenResultType


class DialogScreen(ModalScreen[ScreenResultType]):
    """A modal with a ``#dialog`` container and a ``#title``; subclasses set align and border."""

    DEFAULT_CSS = """
    DialogScreen > #dialog {
        width: 90%;
        max-width: 110;
        height: auto;
        max-height: 90%;
        padding: 1 2;
        background: $panel;
    }
    DialogScreen #title { text-style: bold; margin: 0 0 1 0; }
    """
