"""The footer: model, provider, mode, context left, session tokens and the last context event."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from agent_cli.events import CompactionFinished, TokenCount
from agent_cli.tui.formatting import compaction_summary, tokens


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
        self.background = 0  # background processes running

    def set_background(self, running: int) -> None:
        self.background = running
        self.refresh_content()

    def on_mount(self) -> None:
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

    def refresh_content(self) -> None:
        self.update(self.build_content(), layout=False)  # one line: no need to lay out the screen

    def build_content(self) -> Content:
        parts: list[str | tuple[str, str]] = [(self.model, "bold $text"), f" · {self.provider} · {self.mode}"]
        count = self.count
        if count is not None:
            left = count.percent_left
            style = "$text-error bold" if left <= 10 else "$text-warning" if left <= 25 else "$text-success"
            parts += ["   ", (f"{left}% context left", style)]
            parts.append(f" ({tokens(count.context_used)} / {tokens(count.context_window)})")
            if count.compaction_near:  # from 80% of the threshold: the user can act before it happens
                parts += ["   ", (f"compacting at {count.compact_at_percent}%: /compact now or /autocompact to change",
                                  "$text-warning")]
            total = count.total
            if total.input_tokens or total.output_tokens:
                parts.append(f"   ↑{tokens(total.input_tokens)} ↓{tokens(total.output_tokens)}")
                if total.cached_input_tokens and total.input_tokens:
                    parts.append(f" ({100 * total.cached_input_tokens // total.input_tokens}% cached)")
        if self.background:
            parts += ["   ", (f"{self.background} background", "$text-warning")]
        if self.context_event:
            parts += ["   ", (self.context_event, "$text-accent")]
        return Content.assemble(*parts)
