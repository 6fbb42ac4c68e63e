"""A door: a tool to search with and a tool to call through, standing for tools whose schemas would
not fit in the request. Two doors use it: the lean profile's ``tool_search`` / ``tool_call``
(tools/tool_search.py: memory, ``task`` and MCP tools in a small window) and MCP search mode's
``mcp_search`` / ``mcp_call`` (mcp/search.py: more MCP schemas than their budget).

What they share lives here: ranking by keywords, a schema as text, and routing. A call through the
door is routed (:meth:`DoorCall.route`) to the tool it names before hooks, approvals and modes see
it (session/tool_call.py), so they judge the real tool, as if it had been called directly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence
from typing import Any, Generic, TypeVar

from agent_cli.items import ToolCall
from agent_cli.tools.base import Tool

T = TypeVar("T", bound=Tool)
_WORD = re.compile(r"[a-z0-9]+")


def words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def rank(
    tools: Sequence[T],
    query: str,
    limit: int,
    name_words: Callable[[T], set[str]],
    *,
    partial: bool = False,
    unmatched: bool = True,
) -> list[T]:
    """``tools`` by how many query words their name (counted thrice) and description hold; with
    ``partial`` a word inside a name word counts once; ``unmatched``: tools that score nothing
    still follow (in their order), else they are left out."""
    query_words = words(query)
    scored = []
    for index, tool in enumerate(tools):
        names, text = name_words(tool), words(tool.spec.description)
        score = sum(3 * (word in names) + (word in text) for word in query_words)
        if partial:
            score += sum(1 for word in query_words if word not in names and any(word in name for name in names))
        if score or unmatched:
            scored.append((-score, index, tool))
    return [tool for _, _, tool in sorted(scored, key=lambda entry: entry[:2])[:limit]]


def schema_text(tool: Tool) -> str:
    return json.dumps(tool.spec.parameters, ensure_ascii=False, separators=(",", ":"))


def close_hint(name: str, names: list[str], search_tool: str) -> str:
    """ "; did you mean ..." for a name that is not there, else where to look."""
    import difflib  # only for a call that went wrong (exec's start-up stays lean)

    close = difflib.get_close_matches(name, names, n=3, cutoff=0.5)
    return f"; did you mean {', '.join(close)}?" if close else f"; use {search_tool} to find tools"


class DoorTool(Tool, Generic[T]):
    """One side of a door: it reads the tools behind it from ``catalog`` when used (they change)."""

    read_only = True  # modes, approvals, hooks and batching judge the routed call, the real tool

    def __init__(self, catalog: Callable[[], list[T]]):
        self.catalog = catalog


class DoorCall(DoorTool[T]):
    """The side the model calls through; it runs itself only when the tool it names does not exist."""

    def target(self, args: dict[str, Any]) -> T | None:
        """The tool behind the door that ``args`` (the door call's own) name."""
        raise NotImplementedError

    def route(self, call: ToolCall) -> ToolCall:
        """A call of this door as a call of the tool it names (same call id); other calls, and one
        whose arguments are malformed (dispatch reports it), unchanged."""
        if call.name != self.spec.name:
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
