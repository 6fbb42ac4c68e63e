"""`/context`: what fills the context window, as one bar split by part, with a row per part."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from agent_cli.events import ContextUsage
from agent_cli.tui.formatting import tokens

BAR_WIDTH = 60
COLORS = ("$primary", "$secondary", "$accent", "$warning", "$success", "$error", "$text-primary", "$text-accent")


class ContextUsageView(Static):
    DEFAULT_CSS = """
    ContextUsageView { margin: 0 0 1 0; padding: 0 1; border-left: outer $accent; }
    """

    def __init__(self, usage: ContextUsage) -> None:
        super().__init__(render_usage(usage))
        self.usage = usage


def render_usage(usage: ContextUsage) -> Content:
    window = max(usage.window, 1)
    parts: list[str | tuple[str, str]] = [
        ("Context", "bold"),
        f"  {tokens(usage.used)} / {tokens(usage.window)} tokens"
        f" ({usage.percent(usage.used):.0f}% used, {usage.counting_method}, {usage.accuracy})\n",
    ]
    # Each part ends where the running total ends, so the bar fills as much as the percentage
    # says (a cell for each small part filled 10% of it for 3% used); a part too small for a cell
    # of its own still has its row below.
    used_cells = 0
    total = 0
    for index, part in enumerate(usage.parts):
        total += part.tokens
        end = min(BAR_WIDTH, round(BAR_WIDTH * total / window))
        parts.append(("█" * (end - used_cells), COLORS[index % len(COLORS)]))
        used_cells = max(used_cells, end)
    if usage.used and not used_cells:  # something is there: one cell says so
        parts.append(("█", COLORS[0]))
        used_cells = 1
    parts.append(("░" * (BAR_WIDTH - used_cells), "$text-muted"))
    width = max((len(part.name) for part in usage.parts), default=0) + 2
    for index, part in enumerate(usage.parts):
        parts += [
            "\n",
            ("■ ", COLORS[index % len(COLORS)]),
            part.name.ljust(width),
            (f"{tokens(part.tokens):>7}  {usage.percent(part.tokens):5.1f}%", "$text-muted"),
        ]
    free = max(0, usage.window - usage.used)
    parts += [
        "\n",
        ("□ ", "$text-muted"),
        "free".ljust(width),
        (f"{tokens(free):>7}  {usage.percent(free):5.1f}%", "$text-muted"),
    ]
    return Content.assemble(*parts)
