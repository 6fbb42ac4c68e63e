"""Search/call mode: two stable tools instead of every MCP tool's schema.

When the MCP tools' schemas would cost more than ``mcp_tool_budget_percent`` of the window, the
model gets ``mcp_search`` (keywords -> matching tools with their full schemas) and ``mcp_call``
(``server``, ``tool``, ``arguments``). The tool list then never changes, so prompt caches keep
working, and 100 tools cost the same as 3. A ``mcp_call`` is routed (:func:`route_call`) to the
real ``mcp__<server>__<tool>`` before hooks, approvals and modes see it, so they treat it exactly
like a direct call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agent_cli.items import ToolCall
from agent_cli.mcp.tools import McpTool
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg, str_arg
from agent_cli.tools.mcp_names import CALL_TOOL, SEARCH_TOOL

DEFAULT_RESULTS = 5
MAX_RESULTS = 20
_WORD = re.compile(r"[a-z0-9]+")

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

Catalog = Callable[[], list[McpTool]]


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def search(tools: list[McpTool], query: str, limit: int) -> list[McpTool]:
    """Tools ranked by how many query words their name (counted thrice) and description hold."""
    words = _words(query)
    scored = []
    for index, tool in enumerate(tools):
        name_words = _words(f"{tool.server} {tool.tool}")
        text_words = _words(tool.spec.description)
        score = sum(3 * (word in name_words) + (word in text_words) for word in words)
        score += sum(1 for word in words if any(word in name for name in name_words) and word not in name_words)
        if score:
            scored.append((-score, index, tool))
    return [tool for _, _, tool in sorted(scored)[:limit]]


def describe(tool: McpTool) -> str:
    schema = json.dumps(tool.spec.parameters, ensure_ascii=False, separators=(",", ":"))
    read_only = " (read-only)" if tool.read_only else ""
    return f"server: {tool.server}\ntool: {tool.tool}{read_only}\ndescription: {tool.spec.description}\ninput_schema: {schema}"


class McpSearchTool(Tool):
    spec = SEARCH_SPEC
    read_only = True

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

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


class McpCallTool(Tool):
    """Routes calls (:meth:`route`); runs only when no such tool exists, to say what does."""

    spec = CALL_SPEC
    # Modes, approvals, hooks and batching judge the routed call (the real tool), so this
    # entry point is offered wherever read-only tools are.
    read_only = True

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def route(self, call: ToolCall) -> ToolCall:
        """A call of this tool as a call of the tool it names (a subagent given it routes too)."""
        return route_call(call, self.catalog())

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        import difflib  # only for a call that went wrong (exec's start-up stays lean)

        server, tool = str_arg(args, "server"), str_arg(args, "tool")
        tools = self.catalog()
        names = [f"{t.server}.{t.tool}" for t in tools]
        close = difflib.get_close_matches(f"{server}.{tool}", names, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; use {SEARCH_TOOL} to find tools"
        raise ToolError(f"no MCP tool {tool!r} on server {server!r}{hint}")


def route_call(call: ToolCall, tools: list[McpTool]) -> ToolCall:
    """``mcp_call {server, tool, arguments}`` as a call of the tool itself (same call id)."""
    if call.name != CALL_TOOL:
        return call
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        return call  # dispatch reports the bad JSON
    if not isinstance(args, dict):
        return call
    arguments = args.get("arguments") or {}
    if isinstance(arguments, str):  # some models send the arguments as a JSON string
        try:
            arguments = json.loads(arguments)
        except json.JSONDecodeError:
            return call
    target = next((t for t in tools if t.server == args.get("server") and t.tool == args.get("tool")), None)
    if target is None or not isinstance(arguments, dict):
        return call
    return ToolCall(call.call_id, target.name, json.dumps(arguments, ensure_ascii=False), call.id)
