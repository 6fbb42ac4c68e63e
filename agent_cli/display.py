"""Small text helpers every front end uses to show paths and sizes to a person."""

from __future__ import annotations

import os
from pathlib import Path


def home_relative(path: Path | str) -> str:
    """``path`` with the home directory shown as ``~``."""
    text, home = str(path), str(Path.home())
    if home != os.sep and (text == home or text.startswith(home + os.sep)):
        return "~" + text[len(home) :]
    return text


def short_path(path: Path | str, limit: int = 28) -> str:
    """A home-relative path cut from the left to ``limit`` characters."""
    text = home_relative(path)
    return text if len(text) <= limit else "…" + text[-(limit - 1) :]


def human_size(size: int) -> str:
    """``812 B``, ``3.4 KB``, ``27 MB``: sizes for people (the model gets exact byte counts)."""
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB"):
        value /= 1024
        if value < 1024 or unit == "GB":
            return f"{value:.0f} {unit}" if value >= 10 else f"{value:.1f} {unit}"
    return f"{size} B"  # unreachable: GB ends the loop


def command_output(output: str) -> str:
    """What a person wants to see of a shell call's output: the header lines the model reads
    (``Exit code``, ``Wall time``, …) are dropped, since front ends show them as status."""
    head, marker, rest = output.partition("Output:\n")
    if marker and head.count("\n") <= 4 and head.startswith("Exit code"):
        return rest
    return output


def command_preview(command: str, max_lines: int = 3, max_chars: int = 400) -> str:
    """The first lines of a command for progress output; a heredoc of 300 KB shows as a few
    lines and a count of the rest (the model and the approval prompt still get all of it)."""
    lines = command[: max_chars + 1].splitlines()[:max_lines] or [""]
    shown = "\n".join(lines)[:max_chars]
    if len(shown) >= len(command.rstrip("\n")):
        return command
    rest = command.rstrip("\n").count("\n") + 1 - len(lines)
    more = f"{rest:,} more lines, " if rest > 0 else ""
    return f"{shown} … ({more}{human_size(len(command.encode('utf-8', 'replace')))} in all)"
