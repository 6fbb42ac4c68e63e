"""The ``read_file`` tool: numbered lines of a text file, streamed so huge files cost little."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import human_size, int_arg, output_policy, str_arg
from agent_cli.tools.failures import check_path_text

DEFAULT_LIMIT = 2000
LINE_WIDTH = 500  # characters shown per line
SNIFF_BYTES = 8192
_PIECE = 4 * LINE_WIDTH + 4  # bytes enough for LINE_WIDTH characters
_FOOTER_RESERVE = 200  # bytes of the budget kept for the closing note

SPEC = ToolSpec(
    name="read_file",
    description=(
        f"Read a text file. Each line is shown as `N<TAB>text` (N = 1-based line number, not part "
        f"of the file). Shows {DEFAULT_LIMIT} lines from offset by default; lines over {LINE_WIDTH} "
        "chars are cut with a `…[line truncated]` marker; partial reads end with the total line "
        "count and the offset to continue. Binary files are refused."
    ),
    parameters={
        "type": "object",
        "properties": {
            "path": {"type": "string", "description": "File path, absolute or relative to the cwd."},
            "offset": {"type": "integer", "description": "First line to show, 1-based (default 1)."},
            "limit": {"type": "integer", "description": f"Max lines (default {DEFAULT_LIMIT})."},
        },
        "required": ["path"],
        "additionalProperties": False,
    },
)

_MAGIC: tuple[tuple[bytes, str], ...] = (
    (b"\x89PNG\r\n\x1a\n", "PNG image"),
    (b"\xff\xd8\xff", "JPEG image"),
    (b"GIF87a", "GIF image"),
    (b"GIF89a", "GIF image"),
    (b"%PDF-", "PDF document"),
    (b"PK\x03\x04", "ZIP archive"),
    (b"\x7fELF", "ELF executable"),
    (b"\x1f\x8b", "gzip archive"),
    (b"\xfd7zXZ\x00", "xz archive"),
    (b"\x28\xb5\x2f\xfd", "zstd archive"),
    (b"7z\xbc\xaf\x27\x1c", "7z archive"),
    (b"\x00asm", "WebAssembly module"),
    (b"SQLite format 3\x00", "SQLite database"),
    (b"\xca\xfe\xba\xbe", "Java class or Mach-O universal binary"),
    (b"\xcf\xfa\xed\xfe", "Mach-O executable"),
    (b"\xff\xfe", "UTF-16 text"),
    (b"\xfe\xff", "UTF-16 text"),
)


def detect_binary(sample: bytes) -> str | None:
    """The type of a binary file from its first bytes, or None for text."""
    for magic, kind in _MAGIC:
        if sample.startswith(magic):
            return kind
    if sample[:4] == b"RIFF" and sample[8:12] == b"WEBP":
        return "WebP image"
    return "binary data" if b"\0" in sample else None


@dataclass
class _Window:
    lines: list[str]
    first: int
    last: int  # last line shown (first - 1 when none)
    total: int | None  # known when the file was read to its end or counted
    cut_by_budget: bool


def _read_line(f: BinaryIO) -> tuple[bytes, int] | None:
    """The first bytes of the next line (enough for LINE_WIDTH chars) and its full length."""
    piece = f.readline(_PIECE)
    if not piece:
        return None
    length = len(piece)
    if len(piece) == _PIECE and not piece.endswith(b"\n"):
        while more := f.readline(1 << 16):  # skip the rest of a long line without keeping it
            length += len(more)
            if more.endswith(b"\n"):
                break
    return piece, length


def _count_rest(f: BinaryIO) -> int:
    lines, last = 0, b"\n"
    while chunk := f.read(1 << 20):
        lines += chunk.count(b"\n")
        last = chunk[-1:]
    return lines + (0 if last == b"\n" else 1)


def _render(number: int, piece: bytes, length: int) -> str:
    text = piece.decode("utf-8", "replace").removesuffix("\n").removesuffix("\r")
    if length > len(piece) or len(text) > LINE_WIDTH:
        text = text[:LINE_WIDTH] + f" …[line truncated; {length} bytes]"
    return f"{number}\t{text}"


def read_window(path: Path, offset: int, limit: int, budget: int) -> _Window:
    lines: list[str] = []
    used = 0
    number = 0
    with open(path, "rb") as f:
        while (line := _read_line(f)) is not None:
            number += 1
            if number < offset:
                continue
            rendered = _render(number, *line)
            over_budget = lines and used + len(rendered.encode("utf-8")) + 1 > budget
            if len(lines) >= limit or over_budget:
                total = number + _count_rest(f)
                return _Window(lines, offset, number - 1, total, bool(over_budget))
            lines.append(rendered)
            used += len(rendered.encode("utf-8")) + 1
    return _Window(lines, offset, offset + len(lines) - 1, number, False)


def _footer(window: _Window) -> str | None:
    total = window.total
    if window.first == 1 and window.last == total:
        return None
    note = f"[Lines {window.first}-{window.last} of {total}"
    if window.last < (total or 0):
        why = " (output budget reached)" if window.cut_by_budget else ""
        note += f"{why}; use offset={window.last + 1} to continue"
    return note + "]"


class ReadFileTool(Tool):
    spec = SPEC
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        raw = str_arg(args, "path")
        check_path_text(raw)
        path = ctx.resolve(raw)
        offset = int_arg(args, "offset", 1)
        limit = int_arg(args, "limit", DEFAULT_LIMIT)
        if path.is_dir():
            raise ToolError(f"{raw} is a directory; use list_dir to see its contents")
        if not path.exists():
            raise ToolError(f"file not found: {raw} (resolved to {path})")
        try:
            with open(path, "rb") as f:
                sample = f.read(SNIFF_BYTES)
            kind = detect_binary(sample)
            if kind is not None:
                size = path.stat().st_size
                raise ToolError(f"{raw} is a binary file ({kind}, {human_size(size)}); read_file shows text only")
            budget = max(0, output_policy(ctx).byte_budget - _FOOTER_RESERVE)
            window = await asyncio.to_thread(read_window, path, offset, limit, budget)
        except OSError as exc:
            raise ToolError(f"cannot read {raw}: {exc.strerror or exc}") from None
        if window.total == 0:
            return ToolResult(f"[{raw} is empty]")
        if not window.lines:
            raise ToolError(f"offset {offset} is past the end of {raw} ({window.total} lines)")
        footer = _footer(window)
        text = "\n".join(window.lines) + (f"\n{footer}" if footer else "")
        return ToolResult(text)
