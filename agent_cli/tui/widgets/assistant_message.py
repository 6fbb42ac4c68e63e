"""The assistant's answer, streamed as markdown.

Deltas go through ``Markdown.get_stream()``, which batches appends when they arrive faster than
the widget can parse them; only this widget re-renders, never the finished cells above it.
"""

from __future__ import annotations

from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream


class AssistantMessage(Markdown):
    DEFAULT_CSS = """
    /* No :last-child rules here: an order-dependent selector makes every append restyle all blocks. */
    AssistantMessage { margin: 0; padding: 0 1 0 2; background: transparent; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__(text)
        self._stream: MarkdownStream | None = None
        self._received: list[str] = [text] if text else []

    @property
    def text(self) -> str:
        return "".join(self._received)

    @property
    def streaming(self) -> bool:
        return self._stream is not None

    async def write(self, delta: str) -> None:
        if self._stream is None:
            self._stream = Markdown.get_stream(self)
        self._received.append(delta)
        await self._stream.write(delta)

    async def finish(self, final_text: str | None = None) -> None:
        """Stop streaming; when the final text differs from what streamed, show the final text."""
        if self._stream is not None:
            await self._stream.stop()
            self._stream = None
        if final_text is not None and final_text != self.text:
            self._received = [final_text]
            await self.update(final_text)
