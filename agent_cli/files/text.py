"""Text and code: numbered lines, streamed so that a huge file costs little memory.

Encodings: UTF-8, UTF-8 or UTF-16 with a byte-order mark, else Latin-1 with a note (every byte
is a Latin-1 character, so nothing fails; the note tells the model the guess).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from agent_cli.files.detect import SNIFF_BYTES
from agent_cli.files.view import FileReadError, FileView, Reading

_FOOTER_RESERVE = 200  # bytes of the budget kept for the closing note
_SKIP_CHARS = 1 << 16
_COUNT_CHARS = 1 << 20


def sniff_encoding(sample: bytes) -> str:
    """The codec for a file starting with ``sample``."""
    if sample.startswith(b"\xef\xbb\xbf"):
        return "utf-8-sig"
    if sample.startswith((b"\xff\xfe", b"\xfe\xff")):
        return "utf-16"
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as exc:
        # a sample cut inside a multi-byte character is still UTF-8
        cut_char = (
            len(sample) >= SNIFF_BYTES and exc.start >= len(sample) - 3 and exc.reason == "unexpected end of data"
        )
        return "utf-8" if cut_char else "latin-1"
    return "utf-8"


def open_text(path: Path, sample: bytes, newline: str = "\n") -> tuple[TextIO, str | None]:
    """The file as text (lines split on ``newline``) and a note when its encoding was a guess."""
    encoding = sniff_encoding(sample)
    note = "not valid UTF-8: decoded as Latin-1" if encoding == "latin-1" else None
    return open(path, encoding=encoding, errors="replace", newline=newline), note


@dataclass
class Window:
    lines: list[str]
    first: int
    last: int  # last line shown (first - 1 when none)
    total: int
    cut_by_budget: bool


def _read_line(f: TextIO, width: int) -> tuple[str, int] | None:
    """The next line without its newline (at most ``width + 1`` characters of it) and its full length."""
    piece = f.readline(width + 1)
    if not piece:
        return None
    if piece.endswith("\n"):
        return piece[:-1], len(piece) - 1
    length = len(piece)
    if length > width:
        while more := f.readline(_SKIP_CHARS):  # skip the rest of a long line without keeping it
            if more.endswith("\n"):
                return piece, length + len(more) - 1
            length += len(more)
    return piece, length


def count_rest(f: TextIO) -> int:
    """Lines from the current position to the end; a last line without a newline counts."""
    lines, last = 0, "\n"
    while chunk := f.read(_COUNT_CHARS):
        lines += chunk.count("\n")
        last = chunk[-1:]
    return lines + (0 if last == "\n" else 1)


def _render(number: int, text: str, length: int, width: int) -> str:
    text = text.removesuffix("\r")
    if length > width:
        text = text[:width] + f" …[line truncated; {length} chars]"
    return f"{number}\t{text}"


def read_window(f: TextIO, offset: int, limit: int, budget: int, width: int) -> Window:
    lines: list[str] = []
    used = 0
    number = 0
    while (line := _read_line(f, width)) is not None:
        number += 1
        if number < offset:
            continue
        rendered = _render(number, *line, width)
        over_budget = bool(lines) and used + len(rendered.encode("utf-8", "replace")) + 1 > budget
        if len(lines) >= limit or over_budget:
            return Window(lines, offset, number - 1, number + count_rest(f), over_budget)
        lines.append(rendered)
        used += len(rendered.encode("utf-8", "replace")) + 1
    return Window(lines, offset, offset + len(lines) - 1, number, False)


def _footer(window: Window) -> str | None:
    if window.first == 1 and window.last == window.total:
        return None
    note = f"Lines {window.first}-{window.last} of {window.total}"
    if window.last < window.total:
        why = " (output budget reached)" if window.cut_by_budget else ""
        note += f"{why}; use offset={window.last + 1} to continue"
    return note


def numbered_view(f: TextIO, reading: Reading, name: str | None = None) -> FileView:
    """Lines ``offset`` to ``offset + limit - 1`` of an open text stream, numbered."""
    name = name or reading.path.name
    offset = reading.offset or 1
    limit = reading.limit or reading.limits.max_lines
    budget = max(0, reading.budget - _FOOTER_RESERVE)
    window = read_window(f, offset, limit, budget, reading.limits.max_line_chars)
    if window.total == 0:
        return FileView(f"[{name} is empty]")
    if not window.lines:
        raise FileReadError(f"offset {offset} is past the end of {name} ({window.total} lines)")
    footer = _footer(window)
    return FileView("\n".join(window.lines), (footer,) if footer else ())


def read_text(reading: Reading) -> FileView:
    handle, encoding_note = open_text(reading.path, reading.sample)
    with handle:
        view = numbered_view(handle, reading)
    return FileView(view.body, (*view.notes, encoding_note)) if encoding_note else view


def as_text(reading: Reading, problem: object) -> FileView:
    """The file as text, for a file its type's parser refused; the note says why."""
    view = read_text(reading)
    return FileView(view.body, (*view.notes, f"not parsed as {reading.label} ({problem}); shown as text"))


def text_view(text: str, reading: Reading, name: str) -> FileView:
    """Numbered lines of text already in memory (a converted document)."""
    return numbered_view(io.StringIO(text, newline="\n"), reading, name)
