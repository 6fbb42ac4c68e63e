"""The agent's plan as a checklist."""

from __future__ import annotations

from textual.content import Content
from textual.widgets import Static

from agent_cli.events import PlanUpdated

MARKS = {
    "completed": ("☑ ", "$text-success", "strike $text-muted"),
    "in_progress": ("◐ ", "$text-warning bold", "bold"),
    "pending": ("☐ ", "$text-muted", ""),
}


class PlanView(Static):
    DEFAULT_CSS = """
    PlanView { margin: 0 0 1 0; padding: 0 1; border-left: outer $accent; }
    """

    def __init__(self, event: PlanUpdated) -> None:
        super().__init__(render_plan(event))
        self.plan = event.plan


def render_plan(event: PlanUpdated) -> Content:
    done = sum(step.status == "completed" for step in event.plan)
    parts: list[str | tuple[str, str]] = [(f"Plan  {done}/{len(event.plan)} done", "bold")]
    if event.explanation:
        parts += ["\n", (event.explanation.strip(), "italic $text-muted")]
    for step in event.plan:
        mark, mark_style, text_style = MARKS.get(step.status, MARKS["pending"])
        parts += ["\n", (mark, mark_style), (step.step, text_style)]
    return Content.assemble(*parts)
