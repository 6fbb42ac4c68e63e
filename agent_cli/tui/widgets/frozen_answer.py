"""An old assistant answer as one widget: the markdown rendered by Rich instead of one widget
per block. The transcript swaps an :class:`AssistantMessage` for this once it is no longer among
the newest cells, so long transcripts keep few widgets to lay out."""

from __future__ import annotations

from rich.markdown import Markdown as RichMarkdown
from textual.widgets import Static


class FrozenAnswer(Static):
    DEFAULT_CSS = """
    /* The bottom padding stands for the live answer's last block margin, which does not merge with the next cell's. */
    FrozenAnswer { height: auto; padding: 0 1 1 2; margin: 0; }
    """

    def __init__(self, text: str, dark: bool = True) -> None:
        super().__init__(RichMarkdown(text, code_theme="monokai" if dark else "default", hyperlinks=False))
        self.text = text
