"""What a Session is built from: :mod:`agent_cli.runtime` assembles the parts, the session owns them.

The session holds the MCP toolset, the plugins and the agent definitions without importing the
packages that make them (mcp/, plugins/ and agents/ sit above session/): it uses only what the
protocols here name. The command layer and the front ends know the concrete classes.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.context.skills import Skill
from agent_cli.context.tokens import TokenCounter
from agent_cli.models.base import ModelClient
from agent_cli.session.approvals import Approvals
from agent_cli.session.hooks import HookState
from agent_cli.tools.base import ToolContext, ToolResult
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.shell_snapshot import ShellSnapshot
from agent_cli.trust.gate import TrustState

if TYPE_CHECKING:
    from agent_cli.session.session import Session

Emit = Callable[[ev.Event], None]
ClientFactory = Callable[[str], ModelClient]  # a model's name -> a new client for it


class McpTools(Protocol):
    """The session's MCP toolset (mcp/toolset.py): started with the session, synced between turns."""

    def start(self) -> None: ...

    async def sync(self, emit: Emit, tokens: TokenCounter, count_exactly: Callable[[], Awaitable[None]]) -> None: ...

    async def aclose(self) -> None: ...


class CodeChecks(Protocol):
    """Diagnostics after edits and the project's lint/test commands (lsp/code_checks.py)."""

    async def after_edit(self, call_id: str, result: ToolResult, cwd: Path, emit: Emit) -> ToolResult: ...

    async def after_turn(self, turn: int, context: Callable[[], ToolContext], emit: Emit) -> str | None: ...

    async def aclose(self) -> None: ...


class PluginContent(Protocol):
    """The plugins (plugins/loader.py's PluginSet) as the session uses them."""

    @property
    def skills(self) -> Sequence[Skill]: ...

    @property
    def warnings(self) -> Sequence[str]: ...


class AgentDefinitions(Protocol):
    """The agent definitions the ``task`` tool runs (agents/discovery.py's AgentSet)."""

    @property
    def warnings(self) -> Sequence[str]: ...


@dataclass(frozen=True, slots=True)
class SubagentInfo:
    """What makes a session a subagent (``Session.subagent``)."""

    name: str
    depth: int  # 1 for the session's own children
    parent: Session


@dataclass(frozen=True)
class SessionParts:
    """Everything a Session needs that it does not build itself."""

    config: Config  # the effective config: an untrusted folder's settings already left out
    trust: TrustState
    approvals: Approvals  # policy, sandbox, permission rules; a child shares its parent's
    tools: ToolRegistry
    hooks: HookState
    client_factory: ClientFactory  # called on first use and after each model switch
    plugins: PluginContent  # loaded once per top-level session; its children reuse them
    agents: AgentDefinitions | None = None  # when the session has the `task` tool
    mcp: McpTools | None = None  # None without MCP servers, and in a subagent
    checks: CodeChecks | None = None  # language servers, lint/test commands; a child borrows its parent's
    shell_snapshot: ShellSnapshot | None = None  # the login shell, taken at the first turn
    load_warnings: tuple[str, ...] = ()  # reading the parts went wrong (hooks of .claude/settings.json)
    model: str | None = None  # the config's model unless given (a subagent may run another)
    mode: str | None = None  # the config's mode unless given (a subagent runs its parent's)
    instructions: str | None = None  # a subagent's own system prompt
    subagent: SubagentInfo | None = None
    rollout_path: Path | None = None  # where the session file goes (a subagent's beside its parent's)
    session_id: str | None = None
    lean_tools: bool = True  # the lean profile may add tool_search / tool_call (not to a subagent's list)
    client: ModelClient | None = None  # a client to start with (a parent's, for a child on its model)
    borrowed: bool = False  # ``client`` and ``shell_snapshot`` are a parent's: used here, closed there
