"""What a Session is built from: :mod:`agent_cli.runtime` assembles the parts, the session owns them.

The session holds the MCP toolset, the plugins and the agent definitions without importing the
packages that make them (mcp/, plugins/ and agents/ sit above session/): it uses only what the
protocols here name. The command layer and the front ends know the concrete classes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from agent_cli.config import Config
from agent_cli.context.skills import Skill
from agent_cli.models.base import ModelClient, Usage
from agent_cli.session.approvals import Approvals
from agent_cli.session.checkpointing import TurnCheckpoints
from agent_cli.session.clients import ClientFactory
from agent_cli.session.compaction_state import CompactionState
from agent_cli.session.counters import TokenCounters
from agent_cli.session.hook_state import HookState
from agent_cli.session.learned import LearnedState
from agent_cli.session.run_limits import RunLimits
from agent_cli.session.state import CodeChecks, McpTools, TerminalFactory
from agent_cli.session.tool_use import ToolUseWatch
from agent_cli.session.window import ContextWindow
from agent_cli.store.rollout import RecordingHistory, RolloutWriter
from agent_cli.tools.background import BackgroundProcesses
from agent_cli.tools.editor_files import EditorFiles
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.shell_snapshot import ShellSnapshot
from agent_cli.trust.gate import TrustState


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


class ParentSession(Protocol):
    """The session a subagent runs under, as the child uses it (a ``Session``)."""

    window: ContextWindow
    compaction: CompactionState

    @property
    def subagent(self) -> SubagentInfo | None: ...

    def count_usage(self, usage: Usage) -> None: ...


@dataclass(frozen=True, slots=True)
class SubagentInfo:
    """What makes a session a subagent (``Session.subagent``)."""

    name: str
    depth: int  # 1 for the session's own children
    parent: ParentSession


@dataclass(frozen=True)
class StateParts:
    """What a session keeps its state in, built for it by ``runtime.state_parts``."""

    rollout: RolloutWriter  # every history change is appended to the session file as it happens
    learned: LearnedState  # calibration, windows and compaction state, for a resume
    counters: TokenCounters  # per model; the history counts with the current one
    history: RecordingHistory
    compaction: CompactionState
    window: ContextWindow  # its size and source; server corrections
    tool_use: ToolUseWatch  # a model that never calls tools
    background: BackgroundProcesses  # shell run_in_background; they end with the session
    limits: RunLimits  # agent exec --max-turns / --max-budget-usd
    checkpoints: TurnCheckpoints  # snapshots before a turn changes files (/undo, /rewind)


@dataclass(frozen=True)
class SessionParts:
    """Everything a Session needs that it does not build itself."""

    config: Config  # the effective config: an untrusted folder's settings already left out
    session_id: str
    state: StateParts
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
    client: ModelClient | None = None  # a client to start with (a parent's, for a child on its model)
    borrowed: bool = False  # ``client`` and ``shell_snapshot`` are a parent's: used here, closed there
    # What a front end sets for its run (runtime.open_session's arguments):
    output_schema: dict[str, Any] | None = None  # agent exec --output-schema
    tool_limit: frozenset[str] | None = None  # at most these tools (the Claude Agent SDK's --tools)
    editor_files: EditorFiles | None = None  # an editor's client holds the files (ACP)
    client_terminal: TerminalFactory | None = None  # an editor's client runs the commands (ACP)
