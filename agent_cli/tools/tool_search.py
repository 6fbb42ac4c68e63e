"""``tool_search`` / ``tool_call``: the lean profile's door to every tool not offered directly.

Memory, ``task`` and MCP tools cost hundreds of tokens of schema each; in a small window they wait
behind this pair (context/profile.py decides which). ``tool_search`` returns matching tools with
their full schemas; a ``tool_call`` is routed (:meth:`ToolCallTool.route`) to the tool it names
before hooks, approvals and modes see it, so they judge the real tool, as for ``mcp_call``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from agent_cli.context.profile import TOOL_CALL, TOOL_SEARCH
from agent_cli.items import ToolCall
from agent_cli.models.base import ToolSpec
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

Catalog = Callable[[], list[Tool]]
_WORD = re.compile(r"[a-z0-9]+")


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def rank(tools: list[Tool], query: str, limit: int) -> list[Tool]:
    """Tools by how many query words their name (thrice) and description hold; all when none match."""
    words = _words(query)
    scored = []
    for index, tool in enumerate(tools):
        name_words, text_words = _words(tool.name.replace("_", " ")), _words(tool.spec.description)
        score = sum(3 * (word in name_words) + (word in text_words) for word in words)
        scored.append((-score, index, tool))
    return [tool for _, _, tool in sorted(scored, key=lambda entry: entry[:2])[:limit]]


def describe(tool: Tool) -> str:
    schema = json.dumps(tool.spec.parameters, ensure_ascii=False, separators=(",", ":"))
    return f"name: {tool.name}\ndescription: {tool.spec.description}\ninput_schema: {schema}"


class ToolSearchTool(Tool):
    spec = SEARCH_SPEC
    read_only = True

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

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


class ToolCallTool(Tool):
    """Routes calls (:meth:`route`); runs only when the named tool does not exist, to say so."""

    spec = CALL_SPEC
    read_only = True  # modes, approvals and batching judge the routed call, the real tool

    def __init__(self, catalog: Catalog):
        self.catalog = catalog

    def route(self, call: ToolCall) -> ToolCall:
        """``tool_call {name, arguments}`` as a call of the tool itself (same call id)."""
        if call.name != TOOL_CALL:
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
        name = args.get("name")
        if not isinstance(arguments, dict) or not any(tool.name == name for tool in self.catalog()):
            return call
        return ToolCall(call.call_id, str(name), json.dumps(arguments, ensure_ascii=False), call.id)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        import difflib  # only for a call that went wrong (exec's start-up stays lean)

        name = str_arg(args, "name")
        names = [tool.name for tool in self.catalog()]
        close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else f"; use {TOOL_SEARCH} to find tools"
        raise ToolError(f"no tool {name!r} behind {TOOL_SEARCH}{hint}")
