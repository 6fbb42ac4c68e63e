"""The door: one search tool and one call tool standing for tools whose schemas are not sent.

Whatever the model finds by search stands behind one door: in a small window (the lean profile)
memory, ``task`` and MCP tools, in a larger one the MCP tools beyond their budget. The door shows
one of two faces (tools/door_faces.py): ``tool_search`` / ``tool_call``, or MCP search mode's
``mcp_search`` / ``mcp_call``; the tools, the ranker, the descriptions and the routing are the
same. A request's :class:`Door` is a frozen value, its face and the tools behind it, decided with
the request's tool list (session/request_parts.py); the tool registry never changes for it.

A call through the door is routed (:meth:`Door.route`) to the tool it names before hooks,
approvals and modes see it (session/tool_call.py), so they judge the real tool as if it had been
called directly; the call tool runs itself only to say that no such tool is behind the door.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from agent_cli.items import ToolCall
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg, str_arg

OTHERS_SHOWN = 12  # tools named (not described) beside the matches, at most
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


@dataclass(frozen=True, slots=True)
class Face:
    """What the model sees of a door: its two tools, and how it names a tool behind it."""

    search: ToolSpec
    call: ToolSpec
    noun: str  # "tool", "MCP tool"
    by_server: bool  # a tool is named by ``server`` and ``tool`` (an MCP server's), else by ``name``
    default_results: int
    max_results: int

    @property
    def keys(self) -> tuple[str, ...]:
        return ("server", "tool") if self.by_server else ("name",)

    def address(self, tool: Tool) -> tuple[str, ...]:
        """How the model names ``tool``: the values of :attr:`keys`."""
        if self.by_server:
            return tool.server_address or ("", tool.name)
        return (tool.name,)


def rank(tools: Sequence[Tool], query: str, limit: int, face: Face) -> list[Tool]:
    """The tools that match ``query``, best first: a query word in a tool's name counts thrice, one
    inside a word of its name once, one in its description once. Tools that match nothing are left out."""
    query_words = words(query)
    scored: list[tuple[int, int, Tool]] = []
    for index, tool in enumerate(tools):
        names, text = words(" ".join(face.address(tool))), words(tool.spec.description)
        score = sum(3 * (word in names) + (word in text) for word in query_words)
        score += sum(1 for word in query_words if word not in names and any(word in name for name in names))
        if score:
            scored.append((-score, index, tool))
    scored.sort(key=lambda entry: entry[:2])
    return [tool for _, _, tool in scored[:limit]]


@dataclass(frozen=True, slots=True)
class Door:
    """One request's door: its face and the tools behind it (never empty: no door otherwise)."""

    face: Face
    behind: tuple[Tool, ...]

    @property
    def specs(self) -> tuple[ToolSpec, ToolSpec]:
        return self.face.search, self.face.call

    def owns(self, name: str) -> bool:
        return name in (self.face.search.name, self.face.call.name)

    def tool(self, name: str) -> Tool | None:
        """The door's own tool called ``name`` (the search, or the call that names no tool behind it)."""
        if name == self.face.search.name:
            return SearchTool(self)
        if name == self.face.call.name:
            return CallTool(self)
        return None

    def label(self, tool: Tool) -> str:
        return ".".join(self.face.address(tool))

    def target(self, args: dict[str, Any]) -> Tool | None:
        """The tool behind the door that a call's own arguments name."""
        wanted = tuple(args.get(key) for key in self.face.keys)
        return next((tool for tool in self.behind if self.face.address(tool) == wanted), None)

    def route(self, call: ToolCall) -> ToolCall:
        """A call of the door's call tool as a call of the tool it names (same call id); other
        calls, and one whose arguments are malformed or name nothing behind it, unchanged."""
        if call.name != self.face.call.name:
            return call
        try:
            args = json.loads(call.arguments or "{}")
        except json.JSONDecodeError:
            return call
        if not isinstance(args, dict):
            return call
        arguments = args.get("arguments") or {}
        if isinstance(arguments, str):  # some models send the arguments as a JSON string
            try:
                arguments = json.loads(arguments)
            except json.JSONDecodeError:
                return call
        target = self.target(args)
        if target is None or not isinstance(arguments, dict):
            return call
        return ToolCall(call.call_id, target.name, json.dumps(arguments, ensure_ascii=False), call.id)

    def describe(self, tool: Tool) -> str:
        """A tool as a search shows it: how to name it, what it does, its full input schema."""
        lines = [f"{key}: {value}" for key, value in zip(self.face.keys, self.face.address(tool), strict=True)]
        if tool.read_only:
            lines[-1] += " (read-only)"
        schema = json.dumps(tool.spec.parameters, ensure_ascii=False, separators=(",", ":"))
        return "\n".join([*lines, f"description: {tool.spec.description}", f"input_schema: {schema}"])


class SearchTool(Tool):
    """The door's search: the best matches with their schemas, the other tools by name."""

    read_only = True

    def __init__(self, door: Door):
        self.door = door
        self.spec = door.face.search

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        door, face = self.door, self.door.face
        query = str_arg(args, "query")
        limit = min(int_arg(args, "limit", face.default_results), face.max_results)
        tools = door.behind
        if not tools:
            return ToolResult(f"no more {face.noun}s are available in this session")
        found = rank(tools, query, limit, face)
        if not found:
            return ToolResult(
                f"no {face.noun} matches {query!r}; {len(tools)} {face.noun}s {self._listing()}. Try other keywords."
            )
        body = "\n\n".join(door.describe(tool) for tool in found)
        others = [door.label(tool) for tool in tools if tool not in found]
        more = f"\n\nOther {face.noun}s: {', '.join(others)}." if 0 < len(others) <= OTHERS_SHOWN else ""
        how = f"{face.call.name} {{{', '.join(face.keys)}, arguments}}"
        return ToolResult(f"{len(found)} of {len(tools)} {face.noun}s match:\n\n{body}{more}\n\nCall one with {how}.")

    def _listing(self) -> str:
        door = self.door
        if door.face.by_server:
            return "on servers: " + ", ".join(sorted({door.face.address(tool)[0] for tool in door.behind}))
        names = [door.label(tool) for tool in door.behind]
        return "here: " + ", ".join(names[:OTHERS_SHOWN]) + (", …" if len(names) > OTHERS_SHOWN else "")


class CallTool(Tool):
    """The door's call: routed to the tool it names (:meth:`Door.route`); run only when none is there."""

    read_only = True  # modes, approvals, hooks and batching judge the routed call, the real tool

    def __init__(self, door: Door):
        self.door = door
        self.spec = door.face.call

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        face = self.door.face
        given = [str_arg(args, key) for key in face.keys]
        where = "".join(f" on {key} {value!r}" for key, value in zip(face.keys[:-1], given[:-1], strict=True))
        labels = [self.door.label(tool) for tool in self.door.behind]
        raise ToolError(f"no {face.noun} {given[-1]!r}{where}{close_hint('.'.join(given), labels, face)}")


def close_hint(label: str, labels: list[str], face: Face) -> str:
    """ "; did you mean ..." for a name that is not there, else where to look."""
    import difflib  # only for a call that went wrong (exec's start-up stays lean)

    close = difflib.get_close_matches(label, labels, n=3, cutoff=0.5)
    return f"; did you mean {', '.join(close)}?" if close else f"; use {face.search.name} to find {face.noun}s"
