"""update_plan: validation and the PlanUpdated event; plus the default tool set."""

from __future__ import annotations

import json

import pytest

from agent_cli.events import PlanStep, PlanUpdated
from agent_cli.items import ToolCall
from agent_cli.memory.tools import memory_tools
from agent_cli.tools import READ_ONLY_TOOL_NAMES, default_tools
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import ToolRegistry


@pytest.fixture
def events() -> list:
    return []


@pytest.fixture
def ctx(tmp_path, events) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", emit=events.append)


async def call(ctx: ToolContext, args: dict):
    return await ToolRegistry(default_tools()).dispatch(ToolCall("c1", "update_plan", json.dumps(args)), ctx)


async def test_plan_is_emitted_as_an_event(ctx, events):
    plan = [
        {"step": "Read the code", "status": "completed"},
        {"step": "Fix the bug", "status": "in_progress"},
        {"step": "Run tests", "status": "pending"},
    ]
    result = await call(ctx, {"explanation": "found it", "plan": plan})
    assert result.success and result.output == "Plan updated"
    assert events == [
        PlanUpdated(
            plan=(
                PlanStep("Read the code", "completed"),
                PlanStep("Fix the bug", "in_progress"),
                PlanStep("Run tests", "pending"),
            ),
            explanation="found it",
        )
    ]


@pytest.mark.parametrize(
    ("plan", "message"),
    [
        ([{"step": "a", "status": "in_progress"}, {"step": "b", "status": "in_progress"}], "at most one step"),
        ([{"step": "a", "status": "doing"}], "status must be one of"),
        ([{"step": "", "status": "pending"}], "step must be a non-empty string"),
        (["just a string"], "must be an object"),
        ([{"step": "a", "status": "pending", "extra": 1}], "unknown field"),
    ],
)
async def test_invalid_plans_are_errors_and_emit_nothing(ctx, events, plan, message):
    result = await call(ctx, {"plan": plan})
    assert not result.success and message in result.output
    assert events == []


def test_default_tools_order_read_only_flags_and_schemas():
    tools = default_tools() + memory_tools()
    assert [t.name for t in tools] == [
        "shell",
        "read_file",
        "grep",
        "list_dir",
        "apply_patch",
        "update_plan",
        "shell_output",
        "shell_kill",
        "web_fetch",
        "memory_save",
        "memory_search",
    ]
    assert (
        {t.name for t in tools if t.read_only}
        == READ_ONLY_TOOL_NAMES
        == {"read_file", "grep", "list_dir", "memory_search"}
    )
    for tool in tools:
        params = tool.spec.parameters
        assert params["additionalProperties"] is False and params["required"]
        assert set(params["required"]) <= set(params["properties"])
    spec_bytes = sum(len(json.dumps([t.spec.name, t.spec.description, t.spec.parameters])) for t in tools)
    assert spec_bytes / 4 < 1600  # they are sent with every request (background and web tools included)
