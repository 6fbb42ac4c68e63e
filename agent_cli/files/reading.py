"""Reading a file for the model: what it is (``sniff``), then the processor of its kind
(``read_view``). Images are not handled here: callers treat them in a branch of their own. Other
binary files, audio and video raise FileReadError with their type and size."""

from __future__ import annotations

import os
import stat
from pathlib import Path

from agent_cli.files import detect as kinds
from agent_cli.files.archive import read_archive
from agent_cli.files.detect import SNIFF_BYTES, Detected, detect
from agent_cli.files.documents import read_document
from agent_cli.files.notebook import read_notebook
from agent_cli.files.structured import read_structured
from agent_cli.files.table import read_table
from agent_cli.files.text import read_text
from agent_cli.files.view import FileReadError, FileView, Reading, human_size


def special_kind(path: Path) -> str | None:
    """What ``path`` is when it is a FIFO, a socket or a device, else None. Opening a FIFO blocks
    until a writer comes, and a device may never end: such files are refused before ``open``."""
    try:
        return _special(os.stat(path).st_mode)
    except OSError:
        return None


def _special(mode: int) -> str | None:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return None


def sniff(path: Path) -> tuple[bytes, Detected]:
    """The file's first bytes and its detected kind. Raises OSError, and FileReadError for a FIFO,
    socket or device: opened without blocking and checked on the open descriptor, so a path
    swapped for a FIFO after :func:`special_kind` looked cannot hang the reader either."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    with open(fd, "rb") as handle:
        if (kind := _special(os.fstat(fd).st_mode)) is not None:
            raise FileReadError(f"{path.name} is {kind}, not a file; it cannot be read")
        os.set_blocking(fd, True)
        sample = handle.read(SNIFF_BYTES)
    return sample, detect(path, sample)


def describe(name: str, detected: Detected, size: int) -> str:
    """One line for a file that cannot be shown as text."""
    if detected.kind in (kinds.AUDIO, kinds.VIDEO):
        return f"{name} is {detected.kind} ({detected.label}, {human_size(size)}); it cannot be read as text"
    return f"{name} is a binary file ({detected.label}, {human_size(size)}); only text and known file types can be read"


def read_view(reading: Reading, detected: Detected) -> FileView:
    """The file as the model should see it. Raises FileReadError and OSError."""
    kind = detected.kind
    if reading.pages is not None and kind != kinds.DOCUMENT:
        raise FileReadError(f"pages applies to PDF files only; this is {detected.label}")
    if kind in (kinds.CSV, kinds.TSV):
        return read_table(reading, tab_separated=kind == kinds.TSV)
    if kind in (kinds.JSON, kinds.JSONL, kinds.YAML, kinds.XML):
        return read_structured(reading, kind)
    if kind == kinds.NOTEBOOK:
        return read_notebook(reading)
    if kind == kinds.DOCUMENT:
        return read_document(reading)
    if kind == kinds.ARCHIVE:
        return read_archive(reading)
    if kind == kinds.TEXT:
        return read_text(reading)
    raise FileReadError(describe(reading.path.name, detected, reading.size))
