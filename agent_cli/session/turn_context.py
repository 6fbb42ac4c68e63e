"""What one turn works with: the session's parts, handed to each step instead of the session.

``Session.turn`` (and a compaction, a subagent's turn) builds a :class:`TurnContext`; turn.py,
tool_call.py, compaction.py, hooks.py and memory_recall.py read the parts they use from it and
ask the session's own state (the cached system prompt, the context's size, the tools the mode
allows) through ``state`` (session/state.py). It is frozen: a step changes a part (the history,
the window, the compaction state), never which parts the turn has.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_cli.config import Config
from agent_cli.context.tokens import TokenCounter
from agent_cli.items import Item
from agent_cli.memory.book import MemoryBook
from agent_cli.session.approvals import Approvals
from agent_cli.session.checkpointing import TurnCheckpoints
from agent_cli.session.compaction_state import CompactionState
from agent_cli.session.hook_state import HookState
from agent_cli.session.inbox import Inbox
from agent_cli.session.learned import LearnedState
from agent_cli.session.run_limits import RunLimits
from agent_cli.session.state import CodeChecks, McpTools, SessionState
from agent_cli.session.tool_use import ToolUseWatch
from agent_cli.session.window import ContextWindow
from agent_cli.store.rollout import RecordingHistory, RolloutWriter
from agent_cli.tools.background import BackgroundProcesses
from agent_cli.tools.registry import ToolRegistry


@dataclass(frozen=True)
class TurnContext:
    """The parts a turn uses, as they are when it starts (the model and mode do not change inside one)."""

    state: SessionState  # what only the session answers: session/state.py
    config: Config
    session_id: str
    model: str
    mode: str
    number: int  # the turn's number in the session (0 outside a turn: a /compact)
    history: RecordingHistory
    tokens: TokenCounter
    tools: ToolRegistry
    approvals: Approvals
    hooks: HookState
    window: ContextWindow
    compaction: CompactionState
    learned: LearnedState
    rollout: RolloutWriter
    checkpoints: TurnCheckpoints
    background: BackgroundProcesses
    tool_use: ToolUseWatch
    limits: RunLimits
    memory: MemoryBook | None
    mcp: McpTools | None
    checks: CodeChecks | None  # language servers and lint/test commands (lsp/)
    output_schema: dict[str, Any] | None
    agent_name: str | None  # a subagent's agent; None in the user's own session
    inbox: Inbox  # input a front end adds while the turn runs (Steer): taken before each request

    def record(self, item: Item) -> None:
        self.history.record(item)
