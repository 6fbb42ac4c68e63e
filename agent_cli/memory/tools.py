"""The model's memory tools: ``memory_save`` (a write, so not in ask/plan modes) and
``memory_search`` (read-only). They reach the session's stores through ``ToolContext.memory``."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_cli.memory.model import SCOPES, MemoryError, as_model_text
from agent_cli.models.base import ToolSpec
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.common import int_arg

if TYPE_CHECKING:
    from agent_cli.memory.book import MemoryBook

SEARCH_LIMIT = 10

SAVE_SPEC = ToolSpec(
    name="memory_save",
    description=(
        "Save one durable fact for future sessions: a stable user preference or a project convention "
        "learned the hard way. Never task state or secrets."
    ),
    parameters={
        "type": "object",
        "properties": {
            "text": {"type": "string", "description": "The fact, self-contained, at most 1000 characters."},
            "scope": {
                "type": "string",
                "enum": ["project", "user", "session"],
                "description": "Default project; user: all projects.",
            },
            "tags": {"type": "array", "items": {"type": "string"}},
            "confidence": {"type": "number", "description": "0..1, default 0.8."},
        },
        "required": ["text"],
        "additionalProperties": False,
    },
)

SEARCH_SPEC = ToolSpec(
    name="memory_search",
    description="Search saved memories (relevant ones are already recalled into <memories> for you).",
    parameters={
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "scope": {"type": "string", "enum": list(SCOPES)},
            "limit": {"type": "integer", "description": f"Default {SEARCH_LIMIT}."},
        },
        "required": ["query"],
        "additionalProperties": False,
    },
)


def _book(ctx: ToolContext) -> MemoryBook:
    book = getattr(ctx, "memory", None)
    if book is None:
        raise ToolError("memory is turned off (`memory = false`)")
    return book


class MemorySaveTool(Tool):
    spec = SAVE_SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        book = _book(ctx)
        tags = args.get("tags") or []
        if not all(isinstance(tag, str) for tag in tags):
            raise ToolError("tags must be strings")
        try:
            saved = book.save(
                args["text"], args.get("scope", "project"), tags=tags, confidence=args.get("confidence"), source="model"
            )
        except MemoryError as exc:
            raise ToolError(str(exc)) from None
        verb = "Updated the similar memory" if saved.updated else "Saved"
        return ToolResult(f"{verb} {saved.memory.ref} ({saved.memory.scope}): {as_model_text(saved.memory.text)}")


class MemorySearchTool(Tool):
    spec = SEARCH_SPEC
    read_only = True

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        book = _book(ctx)
        limit = int_arg(args, "limit", SEARCH_LIMIT)
        scopes = [args["scope"]] if args.get("scope") else list(SCOPES)
        found = book.search(args["query"], scopes, limit=min(limit, 50))  # more would not help
        if not found:
            return ToolResult("No memories match.")
        return ToolResult("\n".join(f"[{item.memory.ref}] {as_model_text(item.memory.text)}" for item in found))


def memory_tools() -> list[Tool]:
    """The two tools a session with memory adds to tools/'s own."""
    return [MemorySaveTool(), MemorySearchTool()]
