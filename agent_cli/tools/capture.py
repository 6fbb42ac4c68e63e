"""Bounded-memory capture of a command's output.

Only the first and the last ``HEAD_CAP``/``TAIL_CAP`` bytes stay in memory, whatever the command
prints. Once the stream outgrows that, it goes to a spill file the model is pointed at, from the
first byte up to ``SPILL_HEAD_CAP``; past that only the last ``SPILL_TAIL_CAP`` bytes are kept
(in memory, as chunks) and written after a marker line that says how much was left out, so one
command printing gigabytes leaves a file of at most about 12 MiB. Totals (bytes, lines,
characters) are exact. Invalid UTF-8 is replaced when decoding, never fatal.
"""

from __future__ import annotations

import codecs
import contextlib
import functools
import os
import re
import time
import uuid
from collections import deque
from dataclasses import dataclass, replace
from pathlib import Path
from typing import BinaryIO

from agent_cli import home_budget
from agent_cli.paths import open_private

HEAD_CAP = 64 * 1024
TAIL_CAP = 64 * 1024
SPILL_HEAD_CAP = 8 * 1024 * 1024
SPILL_TAIL_CAP = 4 * 1024 * 1024
SPILL_DIR_NAME = "tool-outputs"
SPILL_MAX_AGE_DAYS = 7


def new_spill_path(data_dir: Path, call_id: str = "") -> Path:
    """A fresh file name under ``data_dir/tool-outputs`` (the file is not created)."""
    prune_old_spills(data_dir / SPILL_DIR_NAME)
    safe_id = re.sub(r"[^A-Za-z0-9_-]", "", call_id)[:40] or uuid.uuid4().hex[:12]
    stamp = time.strftime("%Y%m%d-%H%M%S")
    return data_dir / SPILL_DIR_NAME / f"{stamp}-{safe_id}-{uuid.uuid4().hex[:6]}.log"


@functools.cache  # once per process and folder: spilling must stay cheap
def prune_old_spills(folder: Path, max_age_days: int = SPILL_MAX_AGE_DAYS) -> None:
    """Delete spill files older than ``max_age_days`` so big outputs do not fill the disk."""
    cutoff = time.time() - max_age_days * 86_400
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            with contextlib.suppress(OSError):
                if entry.is_file() and entry.stat().st_mtime < cutoff:
                    os.unlink(entry.path)


def decode_head(data: bytes) -> str:
    """Decode a stream's beginning, dropping a character cut in half at the end."""
    return codecs.getincrementaldecoder("utf-8")("replace").decode(data, final=False)


def decode_tail(data: bytes) -> str:
    """Decode a stream's end, dropping continuation bytes of a character cut at the start."""
    start = 0
    while start < min(3, len(data)) and data[start] & 0xC0 == 0x80:
        start += 1
    return data[start:].decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class CapturedOutput:
    head: bytes
    tail: bytes  # the bytes after ``head``; the middle was dropped unless ``complete``
    total_bytes: int
    total_lines: int
    total_chars: int  # after replacing invalid UTF-8 (== total_bytes when not counted)
    spill_path: Path | None  # file holding the whole stream, when it was written
    spill_error: str | None = None  # why the spill file could not be written

    @property
    def complete(self) -> bool:
        return len(self.head) + len(self.tail) == self.total_bytes

    def text(self) -> str:
        """The whole output; only meaningful when ``complete``."""
        return (self.head + self.tail).decode("utf-8", "replace")


class OutputCapture:
    """Feed it chunks; ``finish`` returns what was kept and the exact totals."""

    def __init__(
        self, spill_path: Path, *, head_cap: int = HEAD_CAP, tail_cap: int = TAIL_CAP, count_chars: bool = True
    ):
        self._spill_path = spill_path
        self._head_cap = head_cap
        self._tail_cap = tail_cap
        self._head = bytearray()
        self._tail = bytearray()
        self._spill: BinaryIO | None = None
        self._spill_error: str | None = None
        self._spill_opened = False
        self._spilled = 0  # bytes written to the spill file so far
        self._spill_tail: deque[bytes] = deque()  # past SPILL_HEAD_CAP: the last SPILL_TAIL_CAP bytes
        self._spill_tail_bytes = 0
        # Counting characters means decoding everything; only byte budgets' markers need it.
        self._decoder = codecs.getincrementaldecoder("utf-8")("replace") if count_chars else None
        self._bytes = 0
        self._newlines = 0
        self._chars = 0
        self._last_byte = 0x0A

    def feed(self, data: bytes) -> None:
        if not data:
            return
        self._bytes += len(data)
        self._newlines += data.count(b"\n")
        if self._decoder is not None:
            self._chars += len(self._decoder.decode(data))
        self._last_byte = data[-1]
        if self._spill is not None:
            self._write_spill(data)
        room = self._head_cap - len(self._head)
        if room > 0:
            self._head += data[:room]
            data = data[room:]
            if not data:
                return
        if len(self._tail) + len(data) > self._tail_cap:
            if self._spill is None and self._spill_error is None:
                self._open_spill(pending=data)
            if len(data) >= self._tail_cap:
                self._tail = bytearray(data[-self._tail_cap :])
                return
            self._tail += data
            del self._tail[: len(self._tail) - self._tail_cap]
        else:
            self._tail += data

    def finish(self) -> CapturedOutput:
        if self._decoder is not None:
            self._chars += len(self._decoder.decode(b"", final=True))
        else:
            self._chars = self._bytes  # not counted: an upper bound
        if self._spill is not None:
            self._finish_spill()
        if self._spill is not None:
            try:
                self._spill.close()
            except OSError as exc:
                self._spill_error = str(exc)
            self._spill = None
        lines = self._newlines + (0 if self._last_byte == 0x0A else 1)
        spilled = self._spill_opened and self._spill_error is None
        if spilled:  # data_dir/tool-outputs/<file>: the home's disk budget (home_budget.py)
            home_budget.written(self._spill_path.parent.parent, min(self._bytes, SPILL_HEAD_CAP + SPILL_TAIL_CAP))
        if self._spill_opened and not spilled:
            with contextlib.suppress(OSError):
                self._spill_path.unlink(missing_ok=True)  # a partial copy would mislead
        return CapturedOutput(
            head=bytes(self._head),
            tail=bytes(self._tail),
            total_bytes=self._bytes,
            total_lines=lines,
            total_chars=self._chars,
            spill_path=self._spill_path if spilled else None,
            spill_error=self._spill_error,
        )

    def _open_spill(self, pending: bytes) -> None:
        try:
            self._spill = open_private(self._spill_path)  # closed in finish()
            self._spill_opened = True
        except OSError as exc:
            self._spill_error = str(exc)
            return
        self._write_spill(bytes(self._head) + bytes(self._tail) + pending)

    def _write_spill(self, data: bytes) -> None:
        assert self._spill is not None
        room = SPILL_HEAD_CAP - self._spilled
        if room < len(data):  # the file is full: keep only a tail, written at the end
            if room > 0:
                self._write_spill(data[:room])
                data = data[room:]
            self._spill_tail.append(data)
            self._spill_tail_bytes += len(data)
            while self._spill_tail_bytes - len(self._spill_tail[0]) >= SPILL_TAIL_CAP:
                self._spill_tail_bytes -= len(self._spill_tail.popleft())
            return
        self._spilled += len(data)
        try:
            self._spill.write(data)
        except OSError as exc:
            self._spill_error = str(exc)
            self._spill.close()
            self._spill = None

    def _finish_spill(self) -> None:
        """The marker and the kept tail, once the stream ended past ``SPILL_HEAD_CAP``."""
        if not self._spill_tail or self._spill is None:
            return
        skip = max(0, self._spill_tail_bytes - SPILL_TAIL_CAP)  # of the oldest chunk kept
        kept = self._spill_tail_bytes - skip
        left_out = self._bytes - self._spilled - kept
        marker = (
            f"\n[agent: {left_out:,} bytes left out here; the output was {self._bytes:,} bytes, this file keeps "
            f"the first {self._spilled:,} and the last {kept:,}]\n"
        ).encode()
        try:
            self._spill.write(marker)
            for index, chunk in enumerate(self._spill_tail):  # chunk by chunk: no copy of the tail
                self._spill.write(memoryview(chunk)[skip:] if index == 0 else chunk)
        except OSError as exc:
            self._spill_error = str(exc)
        self._spill_tail.clear()


def save_complete_output(captured: CapturedOutput, path: Path) -> CapturedOutput:
    """Write an output that is still whole in memory to ``path`` (when the budget cut it)."""
    if captured.spill_path is not None or not captured.complete:
        return captured
    try:
        with open_private(path) as handle:
            handle.write(captured.head + captured.tail)
    except OSError as exc:
        return replace(captured, spill_error=str(exc))
    return replace(captured, spill_path=path)
