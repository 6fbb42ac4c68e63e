"""The session's own state, as the parts of a turn read and change it (``Session`` implements it).

The turn's steps (turn.py, tool_call.py, compaction.py...) get a :class:`TurnContext` holding the
session's parts; what only the session can answer (the system prompt it caches, the context's size
since the last usage report, the tools its mode and limit allow) they ask through this protocol,
so none of them imports ``Session`` and session.py sits above them all.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol

from agent_cli import events as ev
from agent_cli.context.initial import InitialContext
from agent_cli.context.tokens import TokenCounter
from agent_cli.items import Item
from agent_cli.models.base import ModelClient, ToolSpec, Usage
from agent_cli.store.rollout import RecordingHistory
from agent_cli.tools.base import ToolContext
from agent_cli.trust.gate import TrustState

Emit = Callable[[ev.Event], None]


class McpTools(Protocol):
    """The session's MCP toolset (mcp/toolset.py): started with the session, synced between turns."""

    def start(self) -> None: ...

    async def sync(self, emit: Emit, tokens: TokenCounter, count_exactly: Callable[[], Awaitable[None]]) -> None: ...

    async def aclose(self) -> None: ...


class SessionState(Protocol):
    """What a turn's steps ask the session (session/session.py's ``Session``)."""

    @property
    def history(self) -> RecordingHistory: ...

    @property
    def tokens(self) -> TokenCounter: ...

    @property
    def client(self) -> ModelClient: ...

    @property
    def trust(self) -> TrustState: ...

    @property
    def client_factory(self) -> Callable[[str], ModelClient]: ...

    @property
    def instructions(self) -> str: ...

    @property
    def lean(self) -> bool: ...

    @property
    def web_search_mode(self) -> str: ...

    @property
    def effective_window(self) -> int: ...

    @property
    def auto_compact_limit(self) -> int | None: ...

    @property
    def initial(self) -> InitialContext | None: ...

    @property
    def initial_tokens(self) -> int: ...

    def tool_specs(self) -> list[ToolSpec]: ...

    def tool_allowed(self, name: str) -> bool: ...

    def tool_context(self, call_id: str, emit: Emit) -> ToolContext: ...

    def request_items(self, emit: Emit) -> list[Item]: ...

    def start_context(self, emit: Emit) -> None: ...

    def skill_fragments(self, text: str) -> list[str]: ...

    def build_initial_context(self) -> InitialContext: ...

    def restart_context(self, initial: InitialContext) -> None: ...

    def replace_history(self, items: list[Item]) -> None: ...

    def record_usage(self, usage: Usage | None) -> None: ...

    def count_usage(self, usage: Usage) -> None: ...

    def distrust_last_usage(self) -> None: ...

    def context_tokens(self) -> int: ...

    def token_count_event(self) -> ev.TokenCount: ...

    async def count_exactly(self) -> None: ...

    async def count_exactly_near(self, limit: int | None, extra: int = 0) -> None: ...
