"""The two faces of the door (tools/door.py): what the model reads of it, in a small window and
in MCP search mode. The names, descriptions and parameters are what earlier sessions saw, so a
resumed conversation and an agent file's tool list (``mcp_search``, ``mcp_call``) keep working.

- :data:`LEAN`: ``tool_search`` / ``tool_call {name, arguments}``, the lean profile's door to every
  tool not offered directly (context/profile.py decides which): memory, ``task``, MCP tools.
- :data:`MCP`: ``mcp_search`` / ``mcp_call {server, tool, arguments}``, for the MCP tools whose
  schemas would cost more than ``mcp_tool_budget_percent`` of the window (mcp/toolset.py).
"""

from __future__ import annotations

from agent_cli.context.profile import TOOL_CALL, TOOL_SEARCH
from agent_cli.models.base import ToolSpec
from agent_cli.tools.door import Face
from agent_cli.tools.mcp_names import CALL_TOOL, SEARCH_TOOL

LEAN = Face(
    search=ToolSpec(
        name=TOOL_SEARCH,
        description=(
            f"Find more tools (memory, subagents, MCP servers) by keywords; shows their schemas. Run one with {TOOL_CALL}."
        ),
        parameters={
            "type": "object",
            "properties": {"query": {"type": "string"}, "limit": {"type": "integer"}},
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    call=ToolSpec(
        name=TOOL_CALL,
        description=f"Run a tool found with {TOOL_SEARCH}.",
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string"}, "arguments": {"type": "object"}},
            "required": ["name"],
            "additionalProperties": False,
        },
    ),
    noun="tool",
    by_server=False,
    default_results=3,
    max_results=10,
)

MCP = Face(
    search=ToolSpec(
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
                "limit": {"type": "integer", "description": "Max tools to return (default 5, at most 20)."},
            },
            "required": ["query"],
            "additionalProperties": False,
        },
    ),
    call=ToolSpec(
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
    ),
    noun="MCP tool",
    by_server=True,
    default_results=5,
    max_results=20,
)
