"""A file's text before an edit, from its text after and the edit's unified diff.

The first time an edit touches a file, the server is shown the file as it was, so what it
reported then counts as already known, and only what the edit introduced is new.
"""

from __future__ import annotations

import re
from pathlib import Path

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")
MAX_FILE_BYTES = 2 * 1024 * 1024  # a larger file is not sent to a server


def text_before(after: str, diff: str) -> str | None:
    """``after`` with ``diff``'s hunks undone; None when the diff does not fit ``after``."""
    new_lines = after.split("\n")
    old: list[str] = []
    cursor = 0  # index into new_lines of the next line not yet copied
    lines = diff.split("\n")
    index = 0
    while index < len(lines):
        match = HUNK.match(lines[index])
        index += 1
        if match is None:
            continue
        start, length = int(match.group(1)), int(match.group(2) or 1)
        first = start if length == 0 else start - 1
        if first < cursor or first > len(new_lines):
            return None
        old += new_lines[cursor:first]
        cursor = first
        while index < len(lines) and lines[index][:1] in (" ", "-", "+", "\\"):
            line = lines[index]
            index += 1
            if line[:1] == "\\":
                continue
            if line[:1] in (" ", "+"):
                if cursor >= len(new_lines) or new_lines[cursor] != line[1:]:
                    return None
                cursor += 1
            if line[:1] in (" ", "-"):
                old.append(line[1:])
    old += new_lines[cursor:]
    return "\n".join(old)


def read_text(path: Path) -> str | None:
    """The file's text for a server; None when it is gone, not a regular file, too large or binary."""
    try:
        if not path.is_file() or path.stat().st_size > MAX_FILE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:8192]:
        return None
    return data.decode("utf-8", "replace")
