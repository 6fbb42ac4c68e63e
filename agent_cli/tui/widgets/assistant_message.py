"""The assistant's answer, streamed as markdown.

Deltas are batched here and appended to a Textual ``Markdown`` widget, which parses again only
from its last block; only this cell re-renders, never the finished cells above it. (Not through
``Markdown.get_stream()``: it appends in a task of its own, so the time an update takes could not
be measured, and the pacing below needs it.) Three things keep long answers and long transcripts
fast, because every widget on screen costs time in each layout of the screen:

- deltas are appended at most every ``flush_interval`` seconds: each append changes
  the height, so the screen is laid out and, as the anchored transcript scrolls, repainted whole
  (tens of ms on a loaded 2-core machine, more as the answer grows). The interval follows what
  the last update took, from the append to the screen painted, so that updates take at most
  ``RENDER_SHARE`` of the time: a busy loop read the model's stream late and the answer fell
  seconds behind it, and typing in the composer waited behind the updates
  (bench/tui_stream.py --delay);
- a long answer is split into segments at block boundaries: a finished segment keeps its
  layout cached, so an append only lays out the last few kilobytes;
- once the cell is old, the transcript swaps it for a single-widget ``FrozenAnswer`` rendered
  by Rich, instead of one widget per markdown block.
"""

from __future__ import annotations

import asyncio
import time

from textual.containers import Vertical

from agent_cli.tui.widgets.answer_markdown import AnswerMarkdown
from agent_cli.tui.widgets.frozen_answer import FrozenAnswer

MIN_FLUSH_SECONDS = 0.1  # ten updates a second at most: smooth to read, a few layouts to pay
MAX_FLUSH_SECONDS = 1.0  # however slow an update, the answer moves at least once a second
RENDER_SHARE = 0.3  # of the loop's time that updating the live answer may take
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
        self._live: AnswerMarkdown | None = None
        self._segment: list[str] = []  # what went into the live segment
        self._segment_chars = 0
        self._pending: list[str] = []
        self._flush_scheduled = False
        self._update_seconds = 0.0  # what the last update took, from the append to the paint
        # One flush at a time: a flush awaits mounting (slow behind a long transcript) while the
        # next timer fires; two interleaved flushes sealed each other's segment mid-mount.
        self._lock = asyncio.Lock()
        self._stopped = False  # Esc: nothing more of this answer is shown

    def compose(self):
        if self._received:
            yield AnswerMarkdown(self.text)

    @property
    def text(self) -> str:
        return "".join(self._received)

    @property
    def streaming(self) -> bool:
        return self._live is not None

    @property
    def flush_interval(self) -> float:
        """The wait before the next update, long enough that updates take ``RENDER_SHARE`` of the
        time (the wait starts with the first delta after an update began, so about with it)."""
        paced = self._update_seconds / RENDER_SHARE
        return min(MAX_FLUSH_SECONDS, max(MIN_FLUSH_SECONDS, paced))

    async def write(self, delta: str) -> None:
        if not delta or self._stopped:
            return
        self._received.append(delta)
        self._pending.append(delta)
        if not self._flush_scheduled:
            self._flush_scheduled = True
            self.set_timer(self.flush_interval, self._flush)

    async def _flush(self) -> None:
        started = time.perf_counter()
        async with self._lock:
            await self._flush_pending()
        # The layout and paint run after the append, on the screen's refresh: measured there.
        self.call_after_refresh(self._measured, started)

    def _measured(self, started: float) -> None:
        self._update_seconds = time.perf_counter() - started

    async def _flush_pending(self) -> None:
        self._flush_scheduled = False
        text = "".join(self._pending)
        self._pending.clear()
        while text:
            if self._stopped:  # halted (Esc): what is left is never shown
                self._pending.insert(0, text)
                self.stop()
                return
            cut = split_point("".join(self._segment), text, SEGMENT_CHARS)
            head, rest = (text, "") if cut is None else (text[:cut], text[cut:])
            if not await self._write_segment(head):
                continue  # Esc was read while its widget was mounted: none of it is shown
            text = rest
            if cut is not None:
                await self._seal()

    async def _write_segment(self, text: str) -> bool:
        """Append ``text`` to the live segment; False when Esc was read meanwhile and it was not."""
        if self._live is None:
            self._live = AnswerMarkdown()
            await self.mount(self._live)
            if self._stopped:
                return False
        await self._live.append(text)  # its source has the text at once: what is drawn from here is under way
        self._segment.append(text)
        self._segment_chars += len(text)
        return True

    async def _seal(self) -> None:
        """End the live segment; the next delta starts a new one."""
        self._live = None
        self._segment.clear()
        self._segment_chars = 0

    def halt(self) -> None:
        """Show nothing more from now on (safe off the event loop: it only sets a flag); an
        update under way ends after the segment it is drawing."""
        self._stopped = True

    def stop(self) -> None:
        """Esc: show nothing more, at once. What arrived but is not on screen yet is dropped (the
        answer keeps the text shown); an update under way ends after the segment it is drawing."""
        self._stopped = True
        unshown = sum(map(len, self._pending))
        if unshown:
            self._received = [self.text[:-unshown]]
            self._pending.clear()

    async def finish(self, final_text: str | None = None) -> None:
        """Stop streaming; when the final text differs from what streamed, show the final text."""
        if self._stopped:  # never wait for an update under way: seal the segment once it is done
            self.run_worker(self._seal_when_free(), exit_on_error=False)
            return
        async with self._lock:
            await self._flush_pending()
            await self._seal()
        if final_text is not None and final_text != self.text:
            self._received = [final_text]
            await self.remove_children()
            await self.mount(AnswerMarkdown(final_text))

    async def _seal_when_free(self) -> None:
        async with self._lock:
            await self._seal()

    def freeze(self) -> FrozenAnswer | None:
        """A single-widget stand-in for this finished answer (see ``Transcript``)."""
        if self.streaming or not self.text.strip():
            return None
        theme = self.app.current_theme
        return FrozenAnswer(self.text, dark=theme.dark if theme is not None else True)
