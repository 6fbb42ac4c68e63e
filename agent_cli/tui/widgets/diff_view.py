"""A unified diff or an apply_patch body, coloured line by line."""

from __future__ import annotations

import re

from textual.content import Content
from textual.widgets import Static


def line_style(line: str) -> str:
    if line.startswith(("+++", "---", "*** ")):
        return "bold"
    if line.startswith("+"):
        return "$text-success"
    if line.startswith("-"):
        return "$text-error"
    if line.startswith("@@"):
        return "$text-accent"
    return "$text-muted"


HUNK = re.compile(r"^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def line_numbers(lines: list[str]) -> list[str]:
    """The line number each diff line has in its file (the new file's, the old one's for a
    removed line), from the hunk headers; "" where there is none (headers, a patch without them)."""
    numbers: list[str] = []
    old = new = None
    for line in lines:
        if hunk := HUNK.match(line):
            old, new = int(hunk[1]), int(hunk[2])
            numbers.append("")
        elif old is None or new is None or line.startswith(("+++", "---", "\\")):
            numbers.append("")
        elif line.startswith("-"):
            numbers.append(str(old))
            old += 1
        elif line.startswith("+"):
            numbers.append(str(new))
            new += 1
        else:
            numbers.append(str(new))
            old, new = old + 1, new + 1
    return numbers


def render_diff(text: str, max_lines: int | None = None) -> Content:
    lines = text.rstrip("\n").splitlines()
    numbers = line_numbers(lines)
    width = max(map(len, numbers), default=0)
    hidden = 0
    if max_lines is not None and len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines]
    parts: list[str | tuple[str, str]] = []
    for index, line in enumerate(lines):
        if index:
            parts.append("\n")
        if width:
            parts.append((f"{numbers[index]:>{width}} ", "$text-muted"))
        parts.append((line, line_style(line)))
    if hidden:
        parts.append((f"\n… {hidden} more lines", "italic $text-muted"))
    return Content.assemble(*parts)


class DiffView(Static):
    DEFAULT_CSS = """
    DiffView { padding: 0 1; background: $surface; }
    DiffView.notice-diff { margin: 0 0 1 0; }
    """

    def __init__(self, diff: str, max_lines: int | None = None, **kwargs) -> None:
        super().__init__(render_diff(diff, max_lines), **kwargs)
