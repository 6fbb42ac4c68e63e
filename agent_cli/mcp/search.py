"""Search/call mode: two stable tools instead of every MCP tool's schema.

When the MCP tools' schemas would cost more than ``mcp_tool_budget_percent`` of the window, the
model gets ``mcp_search`` (keywords -> matching tools with their full schemas) and ``mcp_call``
(``server``, ``tool``, ``arguments``). The tool list then never changes, so prompt caches keep
working, and 100 tools cost the same as 3. A ``mcp_call`` is routed to the real
``mcp__<server>__<tool>`` before hooks, approvals and modes see it, so they treat it exactly like
a direct call: a door (tools/door.py), as the lean profile's ``tool_search`` / ``tool_call``.
"""

from __future__ import annotations

from typing import Any

from agent_cli.mcp.tools import McpTool
from agent_cli.models.base import ToolSpec
from agent_cli.tools import door
from agent_cli.tools.base import ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg, str_arg
from agent_cli.tools.mcp_names import CALL_TOOL, SEARCH_TOOL

DEFAULT_RESULTS = 5
MAX_RESULTS = 20

SEARCH_SPEC = ToolSpec(
    name=SEARCH_TOOL,
    description=(
        "Find tools offered by the connected MCP servers. Give keywords describing what you need; "
        "returns the best matching tools with their server, name, description and full input schema. "
        f"Then call one with {CALL_TOOL}."
    ),
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string", "description": "Keywords, e.g. 'github pull request comments'."},
            "limit": {
                "type": "integer",
                "description": f"Max tools to return (default {DEFAULT_RESULTS}, at most {MAX_RESULTS}).",
            },
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)
CALL_SPEC = ToolSpec(
    name=CALL_TOOL,
    description=f"Call a tool of a connected MCP server, as found with {SEARCH_TOOL}.",
    parameters={
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The MCP server's name."},
            "tool": {"type": "string", "description": "The tool's name on that server."},
            "arguments": {"type": "object", "description": "The tool's arguments, matching its input schema."},
        },
        "required": ["server", "tool"],
        "additionalProperties": False,
    },
)


def search(tools: list[McpTool], query: str, limit: int) -> list[McpTool]:
    """Tools ranked by how many query words their name (counted thrice) and description hold."""
    return door.rank(
        tools, query, limit, lambda tool: door.words(f"{tool.server} {tool.tool}"), partial=True, unmatched=False
    )


def describe(tool: McpTool) -> str:
    read_only = " (read-only)" if tool.read_only else ""
    return f"server: {tool.server}\ntool: {tool.tool}{read_only}\ndescription: {tool.spec.description}\ninput_schema: {door.schema_text(tool)}"


class McpSearchTool(door.DoorTool[McpTool]):
    spec = SEARCH_SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        query = str_arg(args, "query")
        limit = min(int_arg(args, "limit", DEFAULT_RESULTS), MAX_RESULTS)
        tools = self.catalog()
        found = search(tools, query, limit)
        if not found:
            servers = sorted({tool.server for tool in tools})
            return ToolResult(
                f"no MCP tool matches {query!r}; {len(tools)} tools on servers: {', '.join(servers) or 'none'}. "
                "Try other keywords."
            )
        body = "\n\n".join(describe(tool) for tool in found)
        return ToolResult(f"{len(found)} of {len(tools)} MCP tools match:\n\n{body}\n\nCall one with {CALL_TOOL}.")


class McpCallTool(door.DoorCall[McpTool]):
    """``mcp_call {server, tool, arguments}``: routed to ``mcp__<server>__<tool>`` (tools/door.py);
    offered wherever read-only tools are, since what it routes to is judged as itself."""

    spec = CALL_SPEC

    def target(self, args: dict[str, Any]) -> McpTool | None:
        return next((t for t in self.catalog() if t.server == args.get("server") and t.tool == args.get("tool")), None)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        server, tool = str_arg(args, "server"), str_arg(args, "tool")
        names = [f"{t.server}.{t.tool}" for t in self.catalog()]
        raise ToolError(
            f"no MCP tool {tool!r} on server {server!r}{door.close_hint(f'{server}.{tool}', names, SEARCH_TOOL)}"
        )
