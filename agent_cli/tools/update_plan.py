"""The ``update_plan`` tool: the model's checklist, shown by the front ends."""

from __future__ import annotations

from typing import Any

from agent_cli.events import PlanStep, PlanUpdated
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult

STATUSES = ("pending", "in_progress", "completed")

SPEC = ToolSpec(
    name="update_plan",
    description=(
        "Record or update your step-by-step plan for a multi-step task; the user sees it as a "
        "checklist. Send the whole plan each time; at most one step in_progress."
    ),
    parameters={
        "type": "object",
        "properties": {
            "explanation": {"type": "string", "description": "Optional note on what changed."},
            "plan": {
                "type": "array",
                "items": {
                    "type": "object",
                    "properties": {"step": {"type": "string"}, "status": {"type": "string", "enum": list(STATUSES)}},
                    "required": ["step", "status"],
                    "additionalProperties": False,
                },
            },
        },
        "required": ["plan"],
        "additionalProperties": False,
    },
)


def parse_plan(raw: Any) -> tuple[PlanStep, ...]:
    if not isinstance(raw, list):
        raise ToolError("plan must be an array of {step, status} objects")
    steps: list[PlanStep] = []
    for i, item in enumerate(raw, start=1):
        if not isinstance(item, dict):
            raise ToolError(f"plan item {i} must be an object with step and status")
        step, status = item.get("step"), item.get("status")
        if not isinstance(step, str) or not step.strip():
            raise ToolError(f"plan item {i}: step must be a non-empty string")
        if status not in STATUSES:
            raise ToolError(f"plan item {i}: status must be one of {', '.join(STATUSES)}, got {status!r}")
        unknown = set(item) - {"step", "status"}
        if unknown:
            raise ToolError(f"plan item {i}: unknown field(s) {', '.join(sorted(unknown))}")
        steps.append(PlanStep(step.strip(), status))
    in_progress = sum(1 for s in steps if s.status == "in_progress")
    if in_progress > 1:
        raise ToolError(f"at most one step may be in_progress, got {in_progress}")
    return tuple(steps)


class UpdatePlanTool(Tool):
    spec = SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        steps = parse_plan(args.get("plan"))
        explanation = args.get("explanation")
        if explanation is not None and not isinstance(explanation, str):
            raise ToolError("explanation must be a string")
        ctx.emit(PlanUpdated(plan=steps, explanation=explanation or None))
        return ToolResult("Plan updated")
