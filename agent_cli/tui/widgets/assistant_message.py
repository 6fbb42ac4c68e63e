"""The assistant's answer, streamed as markdown.

Deltas go through ``Markdown.get_stream()``, which batches appends when they arrive faster than
the widget can parse them; only this cell re-renders, never the finished cells above it. Three
things keep long answers and long transcripts fast, because every widget on screen costs time
in each layout of the screen:

- deltas are handed to the stream at most every ``flush_interval`` seconds, 0.1 s or more: each
  append changes the height, so the screen is laid out and, as the anchored transcript scrolls,
  repainted whole (tens of ms on a loaded 2-core machine); at 30 ms a fast model's stream kept
  the loop busy and the answer fell behind it (bench/tui_stream.py --delay);
- a long answer is split into segments at block boundaries: a finished segment keeps its
  layout cached, so an append only lays out the last few kilobytes;
- once the cell is old, the transcript swaps it for a single-widget ``FrozenAnswer`` rendered
  by Rich, instead of one widget per markdown block.
"""

from __future__ import annotations

import asyncio

from textual.containers import Vertical
from textual.widgets import Markdown
from textual.widgets.markdown import MarkdownStream

from agent_cli.tui.widgets.answer_markdown import AnswerMarkdown
from agent_cli.tui.widgets.frozen_answer import FrozenAnswer

MIN_FLUSH_SECONDS = 0.1  # ten updates a second: smooth to read, a few layouts to pay
MAX_FLUSH_SECONDS = 0.25
FLUSH_SECONDS_PER_KB = 0.02  # a longer segment lays out slower, so it is appended less often
SEGMENT_CHARS = 6_000
FENCES = ("```", "~~~")


def closes_blocks(text: str) -> bool:
    """True when ``text`` ends between top-level blocks: after a blank line, outside a code fence."""
    if not text.endswith("\n\n"):
        return False
    fences = sum(1 for line in text.splitlines() if line.lstrip().startswith(FENCES))
    return fences % 2 == 0


def split_point(segment: str, text: str, size: int) -> int | None:
    """Where to end the live segment inside ``text``: the first block boundary at which
    ``segment + text[:cut]`` reaches ``size`` characters. None when there is none yet."""
    start = max(0, size - len(segment) - 2)
    while (found := text.find("\n\n", start)) >= 0:
        cut = found + 2
        if closes_blocks(segment + text[:cut]):
            return cut
        start = found + 1
    return None


class AssistantMessage(Vertical):
    DEFAULT_CSS = """
    /* No :last-child rules here: an order-dependent selector makes every append restyle all blocks. */
    AssistantMessage { height: auto; padding: 0 1 0 2; }
    AssistantMessage > Markdown { margin: 0; padding: 0; background: transparent; }
    AssistantMessage MarkdownH2, AssistantMessage MarkdownH3, AssistantMessage MarkdownH4 { margin: 0 0 1 0; }
    """

    def __init__(self, text: str = "") -> None:
        super().__init__()
        self._received: list[str] = [text] if text else []
        self._live: Markdown | None = None
        self._stream: MarkdownStream | None = None
        self._segment: list[str] = []  # what went into the live segment
        self._segment_chars = 0
        self._pending: list[str] = []
        self._flush_scheduled = False
        # One flush at a time: a flush awaits mounting (slow behind a long transcript) while the
        # next timer fires; two interleaved flushes sealed each other's segment mid-mount.
        self._lock = asyncio.Lock()

    def compose(self):
        if self._received:
            yield AnswerMarkdown(self.text)

    @property
    def text(self) -> str:
        return "".join(self._received)

    @property
    def streaming(self) -> bool:
        return self._stream is not None

    @property
    def flush_interval(self) -> float:
        return min(MAX_FLUSH_SECONDS, MIN_FLUSH_SECONDS + FLUSH_SECONDS_PER_KB * self._segment_chars / 1024)

    async def write(self, delta: str) -> None:
        if not delta:
            return
        self._received.append(delta)
        self._pending.append(delta)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(self.flush_interval, self._flush)

    async def _flush(self) -> None:
        async with self._lock:
            await self._flush_pending()

    async def _flush_pending(self) -> None:
        self._flush_scheduled = False
        text = "".join(self._pending)
        self._pending.clear()
        while text:
            cut = split_point("".join(self._segment), text, SEGMENT_CHARS)
            head, text = (text, "") if cut is None else (text[:cut], text[cut:])
            await self._write_segment(head)
            if cut is not None:
                await self._seal()

    async def _write_segment(self, text: str) -> None:
        if self._stream is None:
            live = self._live = AnswerMarkdown()
            await self.mount(live)
            self._stream = Markdown.get_stream(live)
        await self._stream.write(text)
        self._segment.append(text)
        self._segment_chars += len(text)

    async def _seal(self) -> None:
        """End the live segment; the next delta starts a new one."""
        if self._stream is not None:
            await self._stream.stop()
        self._stream = None
        self._live = None
        self._segment.clear()
        self._segment_chars = 0

    async def finish(self, final_text: str | None = None) -> None:
        """Stop streaming; when the final text differs from what streamed, show the final text."""
        async with self._lock:
            await self._flush_pending()
            await self._seal()
        if final_text is not None and final_text != self.text:
            self._received = [final_text]
            await self.remove_children()
            await self.mount(AnswerMarkdown(final_text))

    def freeze(self) -> FrozenAnswer | None:
        """A single-widget stand-in for this finished answer (see ``Transcript``)."""
        if self.streaming or not self.text.strip():
            return None
        theme = self.app.current_theme
        return FrozenAnswer(self.text, dark=theme.dark if theme is not None else True)
