"""MCP server tools as agent tools: ``mcp__<server>__<tool>`` with an adapted schema.

A tool annotated ``readOnlyHint: true`` is read-only (allowed in ask and plan modes, run
concurrently with other read-only calls); every other MCP tool counts as a write.
"""

from __future__ import annotations

import base64
from typing import TYPE_CHECKING, Any

from agent_cli.items import Image
from agent_cli.mcp.connection import McpCallError
from agent_cli.mcp.results import budgeted, result_text
from agent_cli.mcp.schema import SchemaError, adapt_schema
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.image_result import tool_image
from agent_cli.tools.mcp_names import exposed_name

if TYPE_CHECKING:
    from agent_cli.mcp.manager import McpManager

MAX_DESCRIPTION = 2048


class McpTool(Tool):
    def __init__(
        self, manager: McpManager, server: str, tool: str, spec: ToolSpec, read_only: bool, listed: bool = True
    ):
        self.manager = manager
        self.server = server
        self.tool = tool  # the server's own name for it
        self.server_address = (server, tool)  # how the door's MCP face names it (tools/door_faces.py)
        self.spec = spec
        self.read_only = read_only
        self.listed = listed  # False in search mode: behind the door (mcp_search / mcp_call), not listed

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        try:
            result = await self.manager.call_tool(self.server, self.tool, args, ctx.emit)
        except McpCallError as exc:
            raise ToolError(str(exc)) from None
        images: list[Image] = []

        def show_image(block: Any) -> str | None:
            """Attach an image block as an image (the same path as read_file); None keeps the note."""
            try:
                image, line = tool_image(
                    base64.b64decode(block.data), block.mime_type, ctx, name=f"{self.tool} image {len(images) + 1}"
                )
            except (ToolError, ValueError):  # undecodable: the one-line note stands for it
                return None
            images.append(image)
            return line

        text, success = result_text(result, show_image)
        return ToolResult(budgeted(text, ctx), success=success, images=tuple(images))


def tool_description(tool: Any) -> str:
    text = (tool.description or tool.title or "").strip()
    return text if len(text) <= MAX_DESCRIPTION else text[: MAX_DESCRIPTION - 1] + "…"


def build_tools(manager: McpManager, wire_api: str) -> tuple[list[McpTool], list[str]]:
    """A tool per server tool, sorted so the list is the same from run to run, and a warning
    for each tool whose schema cannot be offered to this provider."""
    tools: list[McpTool] = []
    warnings: list[str] = []
    taken: set[str] = set()
    for connection in sorted(manager.with_tools(), key=lambda c: c.spec.name):
        server = connection.spec.name
        for tool in sorted(connection.tools, key=lambda t: t.name):
            try:
                parameters = adapt_schema(tool.input_schema, wire_api)
            except SchemaError as exc:
                warnings.append(f"MCP tool {server}.{tool.name} left out: {exc}")
                continue
            name = exposed_name(server, tool.name, taken)
            taken.add(name)
            annotations = tool.annotations
            read_only = bool(annotations is not None and annotations.read_only_hint)
            spec = ToolSpec(name, tool_description(tool), parameters)
            tools.append(McpTool(manager, server, tool.name, spec, read_only))
    return tools, warnings
