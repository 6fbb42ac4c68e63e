"""A unified diff or an apply_patch body, coloured line by line."""

from __future__ import annotations

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


def render_diff(text: str, max_lines: int | None = None) -> Content:
    lines = text.rstrip("\n").splitlines()
    hidden = 0
    if max_lines is not None and len(lines) > max_lines:
        hidden = len(lines) - max_lines
        lines = lines[:max_lines]
    parts: list[str | tuple[str, str]] = []
    for index, line in enumerate(lines):
        if index:
            parts.append("\n")
        parts.append((line, line_style(line)))
    if hidden:
        parts.append((f"\n… {hidden} more lines", "italic $text-muted"))
    return Content.assemble(*parts)


class DiffView(Static):
    DEFAULT_CSS = """
    DiffView { padding: 0 1; background: $surface; }
    """

    def __init__(self, diff: str, max_lines: int | None = None, **kwargs) -> None:
        super().__init__(render_diff(diff, max_lines), **kwargs)
