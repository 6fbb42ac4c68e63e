"""Pure parts of the MCP client: tool names, schema adaptation, result text, search ranking, prompt
arguments, and how approvals treat MCP tools."""

from __future__ import annotations

import json

import mcp_types as types
import pytest

from agent_cli.items import ToolCall as ItemToolCall
from agent_cli.mcp.prompts import McpPrompt, PromptArgument, PromptUsageError, parse_arguments
from agent_cli.mcp.results import result_text
from agent_cli.mcp.schema import SchemaError, adapt_schema
from agent_cli.mcp.tools import McpTool
from agent_cli.models.base import ToolSpec
from agent_cli.session.approvals import Approvals
from agent_cli.tools.door import Door, rank
from agent_cli.tools.door_faces import MCP
from agent_cli.tools.mcp_names import display_call, exposed_name, split_name


def test_names_are_sanitized_unique_and_short():
    assert exposed_name("github", "create_issue") == "mcp__github__create_issue"
    assert exposed_name("my.server", "do it/now") == "mcp__my_server__do_it_now"
    assert split_name("mcp__my_server__do_it_now") == ("my_server", "do_it_now")
    assert exposed_name("a__b", "c") == "mcp__a_b__c"  # the separator stays unambiguous
    long = exposed_name("server", "x" * 100)
    assert len(long) == 64 and long.startswith("mcp__server__xxx")
    taken = {"mcp__s__t"}
    assert exposed_name("s", "t", taken) != "mcp__s__t" and len(exposed_name("s", "t", taken)) <= 64
    assert (
        display_call("mcp__fs__read", {"path": "a"}) == 'fs.read({"path": "a"})' and display_call("shell", {}) is None
    )


def test_schemas_get_an_object_top_level_and_lose_what_providers_reject():
    schema = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "anyOf": [{"properties": {"a": {"type": "string"}}}, {"properties": {"b": {"$ref": "#/$defs/B"}}}],
        "$defs": {"B": {"type": "string", "format": "uri", "examples": ["x"]}},
    }
    chat = adapt_schema(schema, "chat")
    assert chat == {"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}}}
    responses = adapt_schema(schema, "responses")
    assert responses["type"] == "object" and "$schema" not in responses and "anyOf" not in responses
    assert responses["properties"]["b"] == {"$ref": "#/$defs/B"} and "$defs" in responses
    assert adapt_schema(None) == {"type": "object", "properties": {}}
    recursive = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/N"}},
        "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
    }
    assert adapt_schema(recursive, "chat")["properties"]["node"]["properties"]["next"]["type"] == "object"
    for bad in (
        {"type": "string"},
        "not a schema",
        {"type": "object", "properties": {"x": {"$ref": "#/$defs/missing"}}},
    ):
        with pytest.raises(SchemaError):
            adapt_schema(bad, "chat")


def test_results_join_text_show_structured_content_and_note_images():
    text, ok = result_text(
        types.CallToolResult(
            content=[
                types.TextContent(type="text", text="one"),
                types.ImageContent(type="image", data="AAAA" * 10, mime_type="image/png"),
                types.ResourceLink(type="resource_link", name="log", uri="file:///tmp/log", mime_type="text/plain"),
            ]
        )
    )
    assert ok and text.splitlines() == [
        "one",
        "[image: image/png, 30 bytes; not shown to the model]",
        "[resource link: log <file:///tmp/log> (text/plain)]",
    ]
    structured, ok = result_text(types.CallToolResult(content=[], structured_content={"n": 1}))
    assert structured == '{\n "n": 1\n}' and ok
    with_text, _ = result_text(
        types.CallToolResult(content=[types.TextContent(type="text", text="t")], structured_content={"n": 1})
    )
    assert with_text == "t"
    failed, ok = result_text(types.CallToolResult(content=[types.TextContent(type="text", text="bad")], is_error=True))
    assert failed == "bad" and not ok
    assert result_text(types.CallToolResult(content=[]))[0] == "(the tool returned no content)"


def tool(server: str, name: str, description: str) -> McpTool:
    return McpTool(None, server, name, ToolSpec(f"mcp__{server}__{name}", description, {"type": "object"}), False)  # type: ignore[arg-type]


def test_search_ranks_name_matches_before_description_matches():
    tools = [
        tool("gh", "list_issues", "List issues of a repository"),
        tool("gh", "create_pr", "Open a pull request"),
        tool("jira", "search", "Find issues and pull request links"),
    ]
    assert [t.tool for t in rank(tools, "pull request", 5, MCP)] == ["create_pr", "search"]  # type: ignore[attr-defined]
    assert [t.tool for t in rank(tools, "issues", 1, MCP)] == ["list_issues"]  # type: ignore[attr-defined]
    assert rank(tools, "weather", 5, MCP) == []


def test_prompt_arguments_positional_or_named_with_a_usage_line():
    prompt = McpPrompt(
        "mcp__s__review", "s", "review", "Review", (PromptArgument("path", True), PromptArgument("focus", False))
    )
    assert parse_arguments(prompt, "app.py") == {"path": "app.py"}
    assert parse_arguments(prompt, "focus=style 'my file.py'") == {"focus": "style", "path": "my file.py"}
    with pytest.raises(PromptUsageError, match=r"missing path; usage: /mcp__s__review <path> \[focus\]"):
        parse_arguments(prompt, "focus=x")
    with pytest.raises(PromptUsageError, match="too many arguments"):
        parse_arguments(prompt, "a b c")


def test_untrusted_asks_before_mcp_writes_but_not_read_only_tools():
    approvals = Approvals("untrusted", interactive=True)
    approvals.is_read_only_tool = lambda name: name == "mcp__fs__read"
    assert not approvals.assess("mcp__fs__read", {}).ask
    need = approvals.assess("mcp__fs__write", {"path": "x"})
    assert need.ask and need.key == "mcp__fs__write"
    approvals.session_approved.add("mcp__fs__write")
    assert not approvals.assess("mcp__fs__write", {}).ask
    for policy in ("on-request", "on-failure", "never"):
        assert not Approvals(policy, interactive=True).assess("mcp__fs__write", {}).ask


def test_mcp_call_is_routed_to_the_tool_it_names():
    router = Door(MCP, (tool("gh", "create_pr", "Open a pull request"),))

    def call(args) -> ItemToolCall:
        return ItemToolCall("c1", "mcp_call", args if isinstance(args, str) else json.dumps(args))

    routed = router.route(call({"server": "gh", "tool": "create_pr", "arguments": {"title": "x"}}))
    assert (routed.call_id, routed.name, json.loads(routed.arguments)) == ("c1", "mcp__gh__create_pr", {"title": "x"})
    as_string = router.route(call({"server": "gh", "tool": "create_pr", "arguments": '{"title": "y"}'}))
    assert json.loads(as_string.arguments) == {"title": "y"}  # some models send the arguments as a JSON string
    for unknown in (
        {"server": "gh", "tool": "nope"},
        "{not json",
        {"server": "gh", "tool": "create_pr", "arguments": [1]},
    ):
        assert router.route(call(unknown)).name == "mcp_call"  # left for mcp_call to explain
