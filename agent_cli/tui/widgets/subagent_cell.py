"""One subagent (a ``task`` call): its description, the tool it is running and how long it has run.

Finished, it shows the start of the agent's final message; Enter or a click expands it to every
step the agent took and the whole message. It is a ToolCell, so the renderer tracks, finishes
and expands it like any tool call.
"""

from __future__ import annotations

import time
from typing import Any

from textual.content import Content

from agent_cli import events as ev
from agent_cli.tui.formatting import duration, one_line, preview_lines, tokens
from agent_cli.tui.widgets.tool_cell import ToolCell, describe_call

TICK_SECONDS = 1.0
MAX_STEPS_SHOWN = 200


class SubagentCell(ToolCell):
    """A ToolCell for a ``task`` call: it expands and finishes like one, and shows the child."""

    DEFAULT_CSS = """
    SubagentCell { border-left: outer $secondary; }
    SubagentCell.-running { border-left: outer $warning; }
    SubagentCell.-failed { border-left: outer $error; }
    """

    def __init__(self, call_id: str, name: str, arguments: dict[str, Any]) -> None:
        super().__init__(call_id, name, arguments)
        self.agent = str(arguments.get("agent", "?"))
        self.description = str(arguments.get("description", ""))
        self.started = time.monotonic()
        self.steps: list[tuple[str, str]] = []  # (mark, what): one per tool call of the agent
        self.current: str | None = None  # the tool call running now
        self.message = ""  # the agent's final message, or the task's error
        self.outcome: ev.SubagentFinished | None = None
        self._running_steps: dict[str, int] = {}

    def on_mount(self) -> None:
        self._timer = self.set_interval(TICK_SECONDS, self._refresh_view)
        self._refresh_view()

    def child_event(self, event: ev.Event) -> None:
        """Something the agent's own session emitted."""
        if isinstance(event, ev.ToolCallBegin):
            self.current = one_line(f"{event.name} {describe_call(event.name, event.arguments)}", 80)
            self._running_steps[event.call_id] = len(self.steps)
            self.steps.append(("●", self.current))
        elif isinstance(event, ev.ToolCallEnd):
            index = self._running_steps.pop(event.call_id, None)
            if index is not None:
                self.steps[index] = ("✓" if event.success else "✗", self.steps[index][1])
            self.current = None
        elif isinstance(event, ev.AgentMessage):
            self.message = event.text
        else:
            return
        self._refresh_view()

    def subagent_finished(self, event: ev.SubagentFinished) -> None:
        self.outcome = event
        self.message = event.final_message or self.message

    def finish(self, event: ev.ToolCallEnd) -> None:
        self.current = None
        if not self.message or not event.success:
            self.message = event.output
        if self.is_mounted:
            self._timer.stop()
        super().finish(event)

    # --- rendering ----------------------------------------------------------------------

    def _refresh_view(self) -> None:
        self._scheduled = False
        if not self.is_mounted:
            return
        parts = [self._header()]
        if self.expanded:
            parts += [
                Content.assemble(("  " + mark + " ", "$text-muted"), (what, "$text-muted"))
                for mark, what in self.steps[-MAX_STEPS_SHOWN:]
            ]
        if self.message.strip() and not self.running:
            parts.append(self._message_content())
        self.update(Content("\n").join(parts))

    def _header(self) -> Content:
        if self.result is None:
            mark = ("● ", "$text-warning")
        else:
            mark = ("✓ ", "$text-success") if self.result.success else ("✗ ", "$text-error")
        parts: list[str | tuple[str, str]] = [mark, (self.agent, "bold")]
        if self.description:
            parts += ["  ", self.description]
        facts = [f"{len(self.steps)} tool call{'s' if len(self.steps) != 1 else ''}"] if self.steps else []
        if self.result is None:
            facts.insert(0, duration(time.monotonic() - self.started))
            if self.current:
                facts.append(self.current)
        else:
            if self.outcome is not None:
                facts.append(f"{tokens(self.outcome.usage.total_tokens)} tokens")
                if self.outcome.status == "interrupted":
                    facts.append("interrupted")
            facts.insert(0, duration(self.result.duration) if self.result.duration else "")
        shown = " · ".join(fact for fact in facts if fact)
        if shown:
            parts.append(("  " + shown, "$text-muted"))
        return Content.assemble(*parts)

    def _message_content(self) -> Content:
        lines = self.message.rstrip("\n").splitlines()
        if not self.expanded:
            head, hidden, tail = preview_lines("\n".join(lines))
            lines = [*head, f"… {hidden} more lines (enter or click to expand)", *tail] if hidden else head
        return Content("\n").join(Content.assemble(("  " + line, "$text-muted")) for line in lines)
