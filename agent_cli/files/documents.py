"""PDF, DOCX, PPTX and XLSX: converted to markdown by markitdown (the ``docs`` extra), then read as text.

Conversions are slow, so the markdown is cached under ``$AGENT_HOME/cache/documents/``, keyed by
the file's path, size and modification time: an edited file is converted again. ``pages`` reads a
PDF page range (pdfminer, which the extra brings); ``offset``/``limit`` page through the lines of
the converted markdown.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import tempfile
import time
from pathlib import Path

from agent_cli.files.text import text_view
from agent_cli.files.view import FileReadError, FileView, Reading, plural

CACHE_FOLDER = "documents"
CACHE_DAYS = 30  # conversions older than this are deleted when a new one is stored
_PAGES = re.compile(r"^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$")


def parse_pages(pages: str) -> tuple[int, int]:
    """``"3"`` or ``"2-5"`` as a 1-based inclusive range."""
    match = _PAGES.match(pages)
    first, last = (int(match[1]), int(match[2] or match[1])) if match else (0, 0)
    if first < 1 or last < first:
        raise FileReadError(f'pages must be a page number or a range like "2-5", got {pages!r}')
    return first, last


def _missing_extra(label: str) -> FileReadError:
    return FileReadError(f"reading {label} files needs the `docs` extra: pip install 'agent-cli[docs]'")


def _cache_path(reading: Reading, variant: str) -> Path | None:
    if reading.cache_dir is None:
        return None
    stat = reading.path.stat()
    key = f"{reading.path}\0{stat.st_size}\0{stat.st_mtime_ns}\0{variant}"
    return reading.cache_dir / CACHE_FOLDER / f"{hashlib.sha256(key.encode()).hexdigest()[:32]}.md"


def _store(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, temporary = tempfile.mkstemp(dir=path.parent, suffix=".tmp")
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(text)
    os.replace(temporary, path)  # atomic: a concurrent reader never sees half a file
    cutoff = time.time() - CACHE_DAYS * 86400
    for old in path.parent.glob("*.md"):
        with contextlib.suppress(OSError):  # another process may be pruning too
            if old.stat().st_mtime < cutoff:
                old.unlink()


def _convert(reading: Reading) -> str:
    try:
        from markitdown import MarkItDown
        from markitdown._exceptions import MissingDependencyException
    except ImportError:
        raise _missing_extra(reading.label) from None
    try:
        return MarkItDown(enable_plugins=False).convert_local(str(reading.path)).markdown
    except MissingDependencyException:
        raise _missing_extra(reading.label) from None
    except Exception as exc:  # converters raise what their libraries raise: all mean "cannot convert"
        raise FileReadError(f"cannot convert this {reading.label} to markdown: {exc}") from None


def _pdf_pages(reading: Reading, first: int, last: int) -> str:
    """The text of pages ``first``..``last``, headed by the page count."""
    try:
        from pdfminer.high_level import extract_text
        from pdfminer.pdfpage import PDFPage
    except ImportError:
        raise _missing_extra(reading.label) from None
    try:
        with open(reading.path, "rb") as handle:
            count = sum(1 for _ in PDFPage.get_pages(handle))
        if first > count:
            raise FileReadError(f"pages {first}-{last}: the PDF has {plural(count, 'page')}")
        text = extract_text(reading.path, page_numbers=range(first - 1, min(last, count)))
    except FileReadError:
        raise
    except Exception as exc:  # pdfminer raises many kinds for broken or encrypted files
        raise FileReadError(f"cannot read this PDF: {exc or type(exc).__name__}") from None
    return f"<!-- pages {first}-{min(last, count)} of {count} -->\n{text.replace(chr(12), '').strip()}"


def read_document(reading: Reading) -> FileView:
    if reading.pages is not None and reading.label != "PDF":
        raise FileReadError(f"pages applies to PDF files only; use offset/limit to page through this {reading.label}")
    variant = f"pages {reading.pages}" if reading.pages else "all"
    cached = _cache_path(reading, variant)
    if cached is not None and cached.is_file():
        markdown = cached.read_text(encoding="utf-8")
    else:
        markdown = _pdf_pages(reading, *parse_pages(reading.pages)) if reading.pages else _convert(reading)
        markdown = markdown.strip() + "\n"
        if cached is not None:
            _store(cached, markdown)
    if not markdown.strip():
        return FileView(f"[{reading.label} has no text to extract (a scanned document?)]")
    view = text_view(markdown, reading, f"the converted {reading.label}")
    note = f"{reading.label} converted to markdown"
    if reading.label == "PDF" and not reading.pages:
        note += '; pages="N-M" reads a page range'
    return FileView(view.body, (note, *view.notes))
