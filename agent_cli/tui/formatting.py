"""Small text helpers for the screen: token counts, durations, paths, output previews."""

from __future__ import annotations

from pathlib import Path


def tokens(count: int) -> str:
    """1234 -> '1.2k', 182_000 -> '182k', 1_500_000 -> '1.5M'."""
    if count < 1000:
        return str(count)
    if count < 10_000:
        return f"{count / 1000:.1f}k"
    if count < 1_000_000:
        return f"{count // 1000}k"
    return f"{count / 1_000_000:.1f}M"


def duration(seconds: float) -> str:
    """0.42 -> '0.4s', 75 -> '1m 15s'."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    if seconds < 60:
        return f"{int(seconds)}s"
    minutes, secs = divmod(int(seconds), 60)
    if minutes < 60:
        return f"{minutes}m {secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h {minutes:02d}m"


def home_relative(path: Path) -> str:
    """The path with the home directory shown as ``~``."""
    try:
        return "~/" + str(path.relative_to(Path.home()))
    except ValueError:
        return str(path)


def one_line(text: str, limit: int = 120) -> str:
    """The text on one line, cut with an ellipsis."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def preview_lines(text: str, head: int = 3, tail: int = 3) -> tuple[list[str], int, list[str]]:
    """The first and last lines of ``text`` and how many lines lie between them."""
    lines = text.rstrip("\n").splitlines()
    if len(lines) <= head + tail + 1:
        return lines, 0, []
    return lines[:head], len(lines) - head - tail, lines[-tail:]
