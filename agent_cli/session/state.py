"""What the session's parts are held as: ``Emit``, and the protocols of the parts runtime.py builds
from packages above session/ (mcp/, lsp/) or hands in for a front end (ACP's terminals)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol

from agent_cli import events as ev
from agent_cli.context.tokens import TokenCounter
from agent_cli.tools.base import ToolContext, ToolResult

Emit = Callable[[ev.Event], None]
TerminalFactory = Callable[[str, Emit], Any]  # (call_id, emit) -> the command runner of that call (ACP)


class McpTools(Protocol):
    """The session's MCP toolset (mcp/toolset.py): started with the session, synced between turns."""

    def start(self) -> None: ...

    async def sync(self, emit: Emit, tokens: TokenCounter, count_exactly: Callable[[], Awaitable[None]]) -> None: ...

    def take_model_notes(self) -> list[str]: ...

    async def aclose(self) -> None: ...


class CodeChecks(Protocol):
    """Diagnostics after edits and the project's lint/test commands (lsp/code_checks.py)."""

    async def after_edit(self, call_id: str, result: ToolResult, cwd: Path, emit: Emit) -> ToolResult: ...

    async def after_turn(self, turn: int, context: Callable[[], ToolContext], emit: Emit) -> str | None: ...

    async def aclose(self) -> None: ...
