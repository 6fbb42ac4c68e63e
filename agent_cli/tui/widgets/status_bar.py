"""The footer: model, provider, mode, context left, session tokens and the last context event.

The line is a list of parts, each with a priority. When the terminal is too narrow for all of
them, the least important parts are dropped whole, so a figure is never cut in half. Other
features add their own part with :meth:`StatusBar.set_part` (e.g. a compaction warning or the
number of background processes) without touching the layout code.
"""

from __future__ import annotations

from dataclasses import dataclass

from textual.content import Content
from textual.timer import Timer
from textual.widgets import Static

from agent_cli.events import CompactionFinished, TokenCount
from agent_cli.tui.formatting import compaction_summary, tokens

SEPARATOR = "   "


@dataclass(frozen=True, slots=True)
class Part:
    """One piece of the line: ``order`` places it, ``priority`` decides what is dropped first (lowest)."""

    content: Content
    order: int
    priority: int


# Where the built-in parts sit and how much they matter.
HINT = (0, 100)  # a transient hint ("press ctrl+c again to quit")
MODEL = (10, 90)
PROVIDER_MODE = (11, 40)
CONTEXT_LEFT = (20, 80)
CONTEXT_USED = (21, 30)
COMPACTION_NEAR = (25, 70)  # the compaction warning: before the session figures, dropped after them
SESSION_TOKENS = (30, 20)
CACHED = (31, 10)
BACKGROUND = (35, 60)  # background processes running (/ps)
CONTEXT_EVENT = (40, 50)


class StatusBar(Static):
    DEFAULT_CSS = """
    StatusBar { height: 1; padding: 0 2; color: $text-muted; }
    """

    def __init__(self, model: str, provider: str, mode: str, **kwargs) -> None:
        super().__init__(**kwargs)
        self.model = model
        self.provider = provider
        self.mode = mode
        self.count: TokenCount | None = None
        self.context_event = ""
        self.extra: dict[str, Part] = {}  # parts other features set by name
        self.hint = ""
        self._hint_timer: Timer | None = None
        self.background = 0  # background processes running

    def set_background(self, running: int) -> None:
        self.background = running
        self.refresh_content()

    def on_mount(self) -> None:
        self.refresh_content()

    def on_resize(self) -> None:
        self.refresh_content()

    def set_session(self, model: str, provider: str, mode: str) -> None:
        self.model, self.provider, self.mode = model, provider, mode
        self.refresh_content()

    def set_tokens(self, count: TokenCount) -> None:
        self.count = count
        self.refresh_content()

    def set_context_event(self, text: str) -> None:
        self.context_event = text
        self.refresh_content()

    def compaction_finished(self, event: CompactionFinished) -> None:
        self.set_context_event(compaction_summary(event))

    def set_part(
        self, name: str, text: str | Content | None, *, order: int = 50, priority: int = 45, style: str = ""
    ) -> None:
        """Show (or with ``None`` / ``""`` remove) a named part of the line."""
        if not text:
            self.extra.pop(name, None)
        else:
            content = text if isinstance(text, Content) else Content.styled(text, style)
            self.extra[name] = Part(content, order, priority)
        self.refresh_content()

    def show_hint(self, text: str, seconds: float) -> None:
        """A short-lived hint at the start of the line (where it covers nothing the user types)."""
        self.hint = text
        if self._hint_timer is not None:
            self._hint_timer.stop()
        self._hint_timer = self.set_timer(seconds, self.clear_hint)
        self.refresh_content()

    def clear_hint(self) -> None:
        self.hint = ""
        self.refresh_content()

    def refresh_content(self) -> None:
        self.update(self.build_content(), layout=False)  # one line: no need to lay out the screen

    # --- the line -----------------------------------------------------------------------

    def parts(self) -> list[Part]:
        parts = [
            Part(Content.styled(self.model, "bold $text"), *MODEL),
            Part(Content(f"{self.provider} · {self.mode}"), *PROVIDER_MODE),
        ]
        if self.hint:
            parts.append(Part(Content.styled(self.hint, "bold $text-warning"), *HINT))
        count = self.count
        if count is not None:
            left = count.percent_left
            style = "$text-error bold" if left <= 10 else "$text-warning" if left <= 25 else "$text-success"
            parts.append(Part(Content.styled(f"{left}% context left", style), *CONTEXT_LEFT))
            parts.append(
                Part(Content(f"({tokens(count.context_used)} / {tokens(count.context_window)})"), *CONTEXT_USED)
            )
            if count.compaction_near:  # from 80% of the threshold: the user can act before it happens
                parts.append(
                    Part(
                        Content.styled(
                            f"compacting at {count.compact_at_percent}%: /compact now or /autocompact to change",
                            "$text-warning",
                        ),
                        *COMPACTION_NEAR,
                    )
                )
            total = count.total
            if total.input_tokens or total.output_tokens:
                parts.append(
                    Part(
                        Content(f"session ↑{tokens(total.input_tokens)} ↓{tokens(total.output_tokens)}"),
                        *SESSION_TOKENS,
                    )
                )
                if total.cached_input_tokens and total.input_tokens:
                    share = 100 * total.cached_input_tokens // total.input_tokens
                    parts.append(Part(Content(f"({share}% cached)"), *CACHED))
        if self.background:
            parts.append(Part(Content.styled(f"{self.background} background", "$text-warning"), *BACKGROUND))
        if self.context_event:
            parts.append(Part(Content.styled(self.context_event, "$text-accent"), *CONTEXT_EVENT))
        parts.extend(self.extra.values())
        return parts

    def build_content(self, width: int | None = None) -> Content:
        """The parts that fit in ``width`` cells (the widget's width by default), in their order."""
        if width is None:
            width = self.content_region.width if self.is_mounted and self.content_region.width else 10_000
        shown = sorted(self.parts(), key=lambda part: part.order)
        while shown and line_width(shown) > width:
            shown.remove(min(shown, key=lambda part: part.priority))
        pieces: list[Content] = []
        for index, part in enumerate(shown):
            if index:
                pieces.append(Content(joiner(shown[index - 1], part)))
            pieces.append(part.content)
        return Content.assemble(*pieces)


def joiner(before: Part, after: Part) -> str:
    """Parts of one group (model and provider, a figure and its detail) sit closer together."""
    return (
        " · "
        if after.order - before.order == 1 and after.order != CONTEXT_USED[0] and after.order != CACHED[0]
        else " "
        if after.order - before.order == 1
        else SEPARATOR
    )


def line_width(parts: list[Part]) -> int:
    ordered = sorted(parts, key=lambda part: part.order)
    return sum(part.content.cell_length for part in ordered) + sum(
        len(joiner(a, b)) for a, b in zip(ordered, ordered[1:])
    )
