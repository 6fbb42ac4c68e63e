"""The session's services: what its turns use and never replace (Codex's ``SessionServices``).

Built once with the session from the parts runtime.py assembled; a turn's steps get them beside
the :class:`~agent_cli.session.turn_context.TurnContext` and the session's state. Each tool call
gets a :class:`~agent_cli.tools.base.ToolContext` made here, whole: the sandbox and environment
the approval step chose for the call are in it from the start.
"""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.config import Config
from agent_cli.memory.book import MemoryBook
from agent_cli.session.approvals import Approvals
from agent_cli.session.checkpointing import TurnCheckpoints
from agent_cli.session.clients import ModelClients
from agent_cli.session.learned import LearnedState
from agent_cli.session.run_limits import RunLimits
from agent_cli.session.state import CodeChecks, Emit, McpTools, TerminalFactory
from agent_cli.session.tool_use import ToolUseWatch
from agent_cli.store.rollout import RolloutWriter
from agent_cli.tools.background import BackgroundProcesses
from agent_cli.tools.base import ToolContext
from agent_cli.tools.editor_files import EditorFiles
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.shell_snapshot import ShellSnapshot
from agent_cli.tools.web_fetch import WebSettings


@dataclass(frozen=True, eq=False)
class SessionServices:
    tools: ToolRegistry
    approvals: Approvals  # policy, sandbox, permission rules, the scrubbed environment
    clients: ModelClients  # the current model's client; another model's for a prompt hook
    rollout: RolloutWriter  # the session file
    learned: LearnedState  # what a resume needs of the window, calibration, compaction
    checkpoints: TurnCheckpoints  # snapshots before a turn changes files (/undo, /rewind)
    background: BackgroundProcesses  # shell run_in_background; they end with the session
    tool_use: ToolUseWatch  # a model that never calls tools
    limits: RunLimits  # agent exec --max-turns / --max-budget-usd
    memory: MemoryBook | None  # None when `memory = false`
    mcp: McpTools | None  # None without MCP servers, and in a subagent
    checks: CodeChecks | None  # language servers and lint/test commands (lsp/)
    shell_snapshot: ShellSnapshot | None  # the login shell, taken at the first turn
    editor_files: EditorFiles | None  # an editor's client holds the files (ACP)
    client_terminal: TerminalFactory | None  # an editor's client runs the commands (ACP)

    def tool_context(self, config: Config, output_limit: int, call_id: str, emit: Emit) -> ToolContext:
        """What the tool of ``call_id`` may use; ``output_limit``: tokens its output keeps in the context."""
        confinement = self.approvals.confinement(call_id)  # lifted for an approved escalation
        return ToolContext(
            cwd=config.cwd,
            data_dir=config.agent_home,
            emit=emit,
            call_id=call_id,
            output_token_limit=output_limit,
            shell_timeout_ms=config.shell_timeout_ms,
            env=confinement.env,
            writable_roots=confinement.writable_roots,
            sandbox=confinement.sandbox,
            shell_snapshot=self.shell_snapshot,
            memory=self.memory,
            read_limits=config.read_file,
            read_denied=confinement.read_denied,
            network=confinement.network,
            background=self.background,
            web=WebSettings(config.web_fetch_allow_private),
            editor=self.editor_files,
            command_runner=self.client_terminal(call_id, emit) if self.client_terminal else None,
        )
