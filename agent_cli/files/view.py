"""What every processor gets and returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.files.limits import ReadLimits


def plural(count: int, noun: str) -> str:
    """``1 row``, ``12,000 rows``."""
    return f"{count:,} {noun}" + ("" if count == 1 else "s")


class FileReadError(Exception):
    """A file that cannot be shown; the message says why and what to do instead."""


@dataclass(frozen=True, slots=True)
class Reading:
    """One request to show a file."""

    path: Path
    label: str  # the detected type, e.g. "CSV"
    sample: bytes  # the file's first bytes
    size: int
    budget: int  # bytes the view should stay within (the tool output's budget)
    limits: ReadLimits = field(default_factory=ReadLimits)
    offset: int | None = None  # 1-based: a line, a row or a record, by type
    limit: int | None = None
    pages: str | None = None  # a PDF page range, "3" or "2-5"
    cache_dir: Path | None = None  # converted documents are kept here; None = not cached


@dataclass(frozen=True, slots=True)
class FileView:
    """The content the model reads and the facts about what was left out, one line each."""

    body: str
    notes: tuple[str, ...] = ()

    def render(self) -> str:
        return "\n".join([self.body, *(f"[{note}]" for note in self.notes)]) if self.notes else self.body


def human_size(size: int) -> str:
    """``812 bytes``, ``3.4 KiB``: sizes as the model reads them (display.py has the ones for people)."""
    for unit in ("bytes", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size} {unit}" if unit == "bytes" else f"{size:.1f} {unit}"
        size /= 1024  # type: ignore[assignment]
    return f"{size} bytes"
