"""Small text helpers for the screen: token counts, durations, paths, output previews, compaction."""

from __future__ import annotations

from agent_cli.events import CompactionFinished


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


def compaction_summary(event: CompactionFinished) -> str:
    """The short form, for the status bar."""
    before, after = tokens(event.tokens_before), tokens(event.tokens_after)
    if not event.applied:
        return f"compaction kept history ({before})"
    label = "auto-compacted" if event.trigger != "manual" else "compacted"
    note = " (fallback)" if event.fallback else ""
    return f"{label} {before} → {after}{note}"


def compaction_text(event: CompactionFinished) -> str:
    """The long form, for the transcript notice."""
    text = compaction_summary(event)
    details = f"{event.items_before} → {event.items_after} items"
    if event.trimmed:
        details += f", {event.trimmed} oldest items dropped to fit"
    text = f"{text} ({details})"
    if event.applied:
        text += ". Long conversations and repeated compaction can make the agent less accurate; /new starts fresh."
    return text
