"""Look tools up by name and run a model's tool call safely.

Nothing a model sends can crash the turn: unknown tools, malformed JSON, arguments that do not
match the schema and exceptions inside a tool all become error outputs the model can read.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agent_cli.items import ToolCall
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.failures import failure_result

_JSON_TYPES = {"string": str, "integer": int, "number": (int, float), "boolean": bool, "array": list, "object": dict}


MAX_DEPTH = 100  # levels of nesting a call's arguments may have


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse a call's JSON arguments. Raises ToolError with a message for the model."""
    if not raw.strip():
        return {}
    try:
        args = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ToolError(f"arguments are not valid JSON ({exc.msg} at char {exc.pos}); send a JSON object") from None
    except RecursionError:  # the decoder recurses per level: 100,000 nested brackets end here
        raise ToolError(
            f"arguments are nested too deeply (more than {MAX_DEPTH} levels); send a flat JSON object"
        ) from None
    if not isinstance(args, dict):
        raise ToolError(f"arguments must be a JSON object, got {type(args).__name__}")
    if nesting_depth(args) > MAX_DEPTH:  # what parsed may still be too deep to encode again (hooks, logs)
        raise ToolError(f"arguments are nested too deeply (more than {MAX_DEPTH} levels); send a flat JSON object")
    return args


def lenient_arguments(raw: str) -> dict[str, Any]:
    """Arguments for display (a live turn's ToolCallBegin, a replayed one); malformed JSON is shown
    raw (dispatch reports the error)."""
    try:
        return parse_arguments(raw)
    except ToolError:
        return {"raw": raw}


def nesting_depth(value: Any) -> int:
    """How deep lists and objects nest in ``value`` (iterative: no recursion limit to hit)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            item = list(item.values())
        if isinstance(item, list):
            deepest = max(deepest, depth)
            if depth <= MAX_DEPTH:
                stack.extend((child, depth + 1) for child in item if isinstance(child, (dict, list)))
    return deepest


def check_arguments(args: dict[str, Any], schema: dict[str, Any]) -> None:
    """A small JSON-schema check: required keys, top-level types, enums, no unknown keys."""
    props: dict[str, Any] = schema.get("properties", {})
    missing = [key for key in schema.get("required", []) if key not in args]
    if missing:
        raise ToolError(f"missing required argument(s): {', '.join(missing)}")
    for key, value in args.items():
        prop = props.get(key)
        if prop is None:
            if schema.get("additionalProperties", True) is False:
                raise ToolError(f"unknown argument {key!r}; expected one of: {', '.join(props)}")
            continue
        expected = _JSON_TYPES.get(prop.get("type", ""))
        wrong_bool = isinstance(value, bool) and prop.get("type") in ("integer", "number")
        if expected and (not isinstance(value, expected) or wrong_bool):
            raise ToolError(f"argument {key!r} must be of type {prop['type']}, got {type(value).__name__}")
        if "enum" in prop and value not in prop["enum"]:
            raise ToolError(f"argument {key!r} must be one of {prop['enum']}, got {value!r}")


class ToolRegistry:
    def __init__(self, tools: Iterable[Tool]):
        self._tools = {tool.name: tool for tool in tools}

    def __contains__(self, name: str) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool | None:
        return self._tools.get(name)

    @property
    def tools(self) -> list[Tool]:
        return list(self._tools.values())

    @property
    def specs(self) -> list[ToolSpec]:
        return [tool.spec for tool in self._tools.values() if tool.listed]

    def replace(self, remove: Iterable[str], add: Iterable[Tool]) -> None:
        """Swap a group of tools (MCP tools, at a turn boundary); the others keep their order."""
        for name in remove:
            self._tools.pop(name, None)
        for tool in add:
            self._tools.setdefault(tool.name, tool)  # a built-in keeps its name

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def is_read_only(self, name: str) -> bool:
        tool = self._tools.get(name)
        return tool is not None and tool.read_only

    async def dispatch(self, call: ToolCall, ctx: ToolContext) -> ToolResult:
        tool = self._tools.get(call.name)
        if tool is None:
            return ToolResult(f"unknown tool {call.name!r}; available tools: {', '.join(self._tools)}", success=False)
        return await run_tool(tool, call, ctx)


async def run_tool(tool: Tool, call: ToolCall, ctx: ToolContext) -> ToolResult:
    """Run ``call`` with ``tool``: its arguments checked against the schema; whatever goes wrong
    becomes an output the model reads."""
    try:
        args = parse_arguments(call.arguments)
        check_arguments(args, tool.spec.parameters)
        return await tool.run(args, ctx)
    except Exception as exc:  # a bad call, a bug in a tool or the file system: the model reads it
        return failure_result(call.name, exc)
