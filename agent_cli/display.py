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
