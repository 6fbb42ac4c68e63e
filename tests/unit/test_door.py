"""One door for what the model finds by search: one search tool, one call tool, one ranker, two faces.

The lean profile's ``tool_search`` / ``tool_call`` and MCP search mode's ``mcp_search`` /
``mcp_call`` are the same two tools over a request's frozen door (tools/door.py); a request's
tool list is computed without touching the tool registry (session/request_parts.py).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_cli.items import ToolCall
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.door import CallTool, Door, SearchTool, rank
from agent_cli.tools.door_faces import LEAN, MCP
from tests.scripted_model import ScriptedModel, scripted_session


class Plain(Tool):
    def __init__(self, name: str, description: str, server: str | None = None, read_only: bool = False):
        self.spec = ToolSpec(name, description, {"type": "object", "properties": {"query": {"type": "string"}}})
        self.read_only = read_only
        self.server_address = (server, name.rsplit("__", 1)[-1]) if server else None

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        return ToolResult("ran")


MEMORY = [
    Plain("memory_search", "Search the memories saved earlier", read_only=True),
    Plain("memory_save", "Save a memory for later sessions"),
    Plain("task", "Run a subagent on a task"),
]
SERVER = [
    Plain("mcp__gh__list_issues", "List issues of a repository", "gh"),
    Plain("mcp__gh__create_pr", "Open a pull request", "gh"),
    Plain("mcp__jira__search", "Find issues and pull request links", "jira"),
]


def context(tmp_path: Path) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path)


def test_both_faces_are_the_same_two_tools_and_the_same_ranker():
    lean, mcp = Door(LEAN, tuple(MEMORY)), Door(MCP, tuple(SERVER))
    assert type(lean.tool("tool_search")) is type(mcp.tool("mcp_search")) is SearchTool
    assert type(lean.tool("tool_call")) is type(mcp.tool("mcp_call")) is CallTool
    assert lean.tool("mcp_search") is None and lean.specs == (LEAN.search, LEAN.call)
    # A name word counts thrice, a word inside a name word and the description once each.
    assert [tool.name for tool in rank(MEMORY, "memory search", 5, LEAN)] == ["memory_search", "memory_save"]
    assert [tool.name for tool in rank(SERVER, "pull request", 5, MCP)] == ["mcp__gh__create_pr", "mcp__jira__search"]
    assert rank(SERVER, "weather", 5, MCP) == []


async def test_a_search_shows_the_matches_whole_and_names_the_others(tmp_path):
    lean = Door(LEAN, tuple(MEMORY))
    found = (await SearchTool(lean).run({"query": "saved memories", "limit": 1}, context(tmp_path))).output
    assert found.startswith("1 of 3 tools match:\n\nname: memory_search (read-only)\ndescription: Search")
    assert 'input_schema: {"type":"object"' in found
    assert "Other tools: memory_save, task." in found and found.endswith("Call one with tool_call {name, arguments}.")
    nothing = (await SearchTool(Door(MCP, tuple(SERVER))).run({"query": "weather"}, context(tmp_path))).output
    assert nothing == "no MCP tool matches 'weather'; 3 MCP tools on servers: gh, jira. Try other keywords."


async def test_a_call_through_the_door_is_routed_or_says_what_is_not_there(tmp_path):
    mcp = Door(MCP, tuple(SERVER))
    call = ToolCall("c1", "mcp_call", json.dumps({"server": "gh", "tool": "create_pr", "arguments": {"title": "x"}}))
    routed = mcp.route(call)
    assert (routed.call_id, routed.name, json.loads(routed.arguments)) == ("c1", "mcp__gh__create_pr", {"title": "x"})
    assert Door(LEAN, tuple(MEMORY)).route(call) is call  # another door's call: left as it is
    with pytest.raises(ToolError, match=r"no MCP tool 'creat_pr' on server 'gh'; did you mean gh\.create_pr\?"):
        await CallTool(mcp).run({"server": "gh", "tool": "creat_pr"}, context(tmp_path))
    with pytest.raises(ToolError, match=r"no tool 'weather'; use tool_search to find tools"):
        await CallTool(Door(LEAN, tuple(MEMORY))).run({"name": "weather"}, context(tmp_path))


async def test_a_lean_request_puts_the_door_last_and_leaves_the_registry_as_it_was(tmp_path):
    session = scripted_session(tmp_path, ScriptedModel(), 'context_profile="lean"')
    registry = list(session.tools.names)
    parts = session.request_parts()
    assert parts.lean and [spec.name for spec in parts.tools[-2:]] == ["tool_search", "tool_call"]
    assert parts.door is not None and {"memory_search", "memory_save"} <= {tool.name for tool in parts.door.behind}
    assert session.tools.names == registry  # the door is the request's, not the registry's
    assert session.tool_specs() == list(parts.tools) and session.request_parts() == parts
    await session.aclose()


async def test_unlisted_tools_stand_behind_the_mcp_face_in_the_full_profile(tmp_path):
    session = scripted_session(tmp_path, ScriptedModel())
    assert session.request_parts().door is None  # nothing behind it: no door offered
    hidden = Plain("mcp__gh__create_pr", "Open a pull request", "gh")
    hidden.listed = False  # as MCP search mode leaves its tools (mcp/toolset.py)
    session.tools.replace((), [hidden])
    parts = session.request_parts()
    assert [spec.name for spec in parts.tools[-2:]] == ["mcp_search", "mcp_call"]
    assert parts.door is not None and parts.door.behind == (hidden,)
    assert "mcp__gh__create_pr" not in [spec.name for spec in parts.tools]
    await session.aclose()
