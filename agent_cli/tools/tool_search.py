"""``tool_search`` / ``tool_call``: the lean profile's door to every tool not offered directly.

Memory, ``task`` and MCP tools cost hundreds of tokens of schema each; in a small window they wait
behind this pair (context/profile.py decides which). ``tool_search`` returns matching tools with
their full schemas; a ``tool_call`` is routed to the tool it names before hooks, approvals and
modes see it, so they judge the real tool: a door (tools/door.py), as MCP search mode's.
"""

from __future__ import annotations

from typing import Any

from agent_cli.context.profile import TOOL_CALL, TOOL_SEARCH
from agent_cli.models.base import ToolSpec
from agent_cli.tools import door
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg, str_arg

DEFAULT_RESULTS, MAX_RESULTS = 3, 10

SEARCH_SPEC = ToolSpec(
    name=TOOL_SEARCH,
    description=f"Find more tools (memory, subagents, MCP servers) by keywords; shows their schemas. Run one with {TOOL_CALL}.",
    parameters={
        "type": "object",
        "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
        "required": ["query"],
        "additionalProperties": False,
    },
)
CALL_SPEC = ToolSpec(
    name=TOOL_CALL,
    description=f"Run a tool found with {TOOL_SEARCH}.",
    parameters={
        "type": "object",
        "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
        "required": ["name"],
        "additionalProperties": False,
    },
)


def rank(tools: list[Tool], query: str, limit: int) -> list[Tool]:
    """Tools by how many query words their name (thrice) and description hold; all when none match."""
    return door.rank(tools, query, limit, lambda tool: door.words(tool.name.replace("_", " ")))


def describe(tool: Tool) -> str:
    return f"name: {tool.name}\ndescription: {tool.spec.description}\ninput_schema: {door.schema_text(tool)}"


class ToolSearchTool(door.DoorTool[Tool]):
    spec = SEARCH_SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str_arg(args, "query")
        limit = min(int_arg(args, "limit", DEFAULT_RESULTS), MAX_RESULTS)
        tools = self.catalog()
        if not tools:
            return ToolResult("no more tools are available in this session")
        found = rank(tools, query, limit)
        body = "\n\n".join(describe(tool) for tool in found)
        others = ", ".join(tool.name for tool in tools if tool not in found)
        more = f"\n\nOther tools: {others}." if others else ""
        return ToolResult(f"{body}{more}\n\nRun one with {TOOL_CALL} {{name, arguments}}.")


class ToolCallTool(door.DoorCall[Tool]):
    """``tool_call {name, arguments}``: routed to the tool it names (tools/door.py)."""

    spec = CALL_SPEC

    def target(self, args: dict[str, Any]) -> Tool | None:
        return next((tool for tool in self.catalog() if tool.name == args.get("name")), None)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str_arg(args, "name")
        hint = door.close_hint(name, [tool.name for tool in self.catalog()], TOOL_SEARCH)
        raise ToolError(f"no tool {name!r} behind {TOOL_SEARCH}{hint}")
