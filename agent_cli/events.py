"""Every event the session core emits. Front ends render these; the core never prints.

Events are small frozen dataclasses. Deltas are addressed by the turn they belong to; tool
events by ``call_id`` so a front end can update a cell in place.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from agent_cli.models.base import Usage
from agent_cli.models.web_search import WebSource

# The questions a turn waits on and their answers live in questions.py; they are events like these.
from agent_cli.questions import NETWORK_QUESTION as NETWORK_QUESTION
from agent_cli.questions import ApprovalDecision as ApprovalDecision
from agent_cli.questions import ApprovalRequest as ApprovalRequest
from agent_cli.questions import ElicitationAnswer as ElicitationAnswer
from agent_cli.questions import ElicitationRequest as ElicitationRequest


@dataclass(frozen=True, slots=True)
class TurnStarted:
    turn_id: int


@dataclass(frozen=True, slots=True)
class UserMessage:
    """What the user's input became after expansion, as recorded."""

    text: str
    typed: str | None = None  # what the user typed, when expansion or a command changed it
    images: tuple[str, ...] = ()  # names of the images attached to it


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    text: str


@dataclass(frozen=True, slots=True)
class AgentMessage:
    """A finished assistant message."""

    text: str


@dataclass(frozen=True, slots=True)
class Refusal(AgentMessage):
    """A finished assistant message that declines to answer (stop reason ``refusal``): its own item
    in `agent exec`, not the answer; a front end that does not know it shows it as a message."""


@dataclass(frozen=True, slots=True)
class ReasoningDone:
    text: str


@dataclass(frozen=True, slots=True)
class ToolCallBegin:
    call_id: str
    name: str
    arguments: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ToolOutputDelta:
    """Live output of a running tool (shell), for display only."""

    call_id: str
    text: str
    skipped_bytes: int = 0  # output dropped before ``text`` because it came faster than it is shown


@dataclass(frozen=True, slots=True)
class ToolTerminal:
    """The command of ``call_id`` runs in the client's terminal ``terminal_id`` (ACP), which shows it."""

    call_id: str
    terminal_id: str


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str
    kind: Literal["add", "delete", "update"]
    move_to: str | None = None
    diff: str = ""


@dataclass(frozen=True, slots=True)
class ToolCallEnd:
    call_id: str
    name: str
    arguments: dict[str, Any]
    output: str  # what the model reads
    success: bool
    duration: float
    exit_code: int | None = None
    changes: tuple[FileChange, ...] = ()
    permission: str | None = None  # allow | ask | deny: what a permission rule decided
    permission_rules: tuple[tuple[str, str], ...] = ()  # (rule, where it is written) that decided


@dataclass(frozen=True, slots=True)
class PlanStep:
    step: str
    status: Literal["pending", "in_progress", "completed"]


@dataclass(frozen=True, slots=True)
class PlanUpdated:
    plan: tuple[PlanStep, ...]
    explanation: str | None = None


COMPACTION_WARNING_SHARE = 80  # % of the auto-compaction threshold from which the user is warned


@dataclass(frozen=True, slots=True)
class TokenCount:
    """Sent after every model response."""

    last: Usage  # this request
    total: Usage  # the whole session
    context_used: int  # tokens the next request is estimated to carry
    context_window: int  # effective window
    counting_method: str = "estimate"
    accuracy: str = "estimated"  # "exact", "calibrated ×N (…)" or "estimated" (context/tokens.py)
    compact_at: int | None = None  # context tokens at which auto-compaction starts; None when off

    @property
    def compaction_near(self) -> bool:
        """The context has reached 80% of the auto-compaction threshold (front ends warn)."""
        return self.compact_at is not None and self.context_used >= self.compact_at * COMPACTION_WARNING_SHARE // 100

    @property
    def compact_at_percent(self) -> int:
        """The threshold as a share of the usable window."""
        return 100 * (self.compact_at or 0) // max(1, self.context_window)

    @property
    def percent_left(self) -> int:
        if self.context_window <= 0:
            return 0
        left = 100 - (100 * self.context_used) // self.context_window
        return max(0, min(100, left))


@dataclass(frozen=True, slots=True)
class Retry:
    attempt: int
    max_attempts: int
    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class ModelWaiting:
    """No answer from the model for ``seconds`` (sent every few seconds while that lasts)."""

    seconds: float


@dataclass(frozen=True, slots=True)
class Warning:
    message: str


@dataclass(frozen=True, slots=True)
class Error:
    """Something went wrong. ``fatal`` errors end the turn."""

    message: str
    fatal: bool = False


@dataclass(frozen=True, slots=True)
class Notice:
    """Neutral information for the user (command output, status tables)."""

    text: str
    title: str | None = None


@dataclass(frozen=True, slots=True)
class ContextPart:
    name: str  # "system prompt", "tool schemas", "AGENTS.md", "conversation"...
    tokens: int


@dataclass(frozen=True, slots=True)
class ContextUsage:
    """`/context`: what fills the context window now, part by part (a bar in the TUI, a table in exec)."""

    parts: tuple[ContextPart, ...]
    used: int  # sum of the parts
    window: int  # effective window
    counting_method: str
    accuracy: str = "estimated"

    def percent(self, tokens: int) -> float:
        return 100 * tokens / self.window if self.window > 0 else 0.0


@dataclass(frozen=True, slots=True)
class CommandAction:
    """A slash command only a front end can carry out. `agent exec` ends on "quit"."""

    # copy, export: the argument is the text for the clipboard; resume: the session (a fork's new
    # file); worktree: the folder to go on in, ``then`` a set-up command to run there first;
    # detach: leave the session running in the host, ``argument`` a prompt to start there first
    action: Literal["quit", "new", "resume", "rewind", "copy", "export", "login", "worktree", "detach"]
    argument: str | None = None
    then: str | None = None


@dataclass(frozen=True, slots=True)
class InputRejected:
    """The input cannot run as typed (unknown command, missing @file, refused !`cmd`...).

    Nothing was sent to the model. `agent exec` exits with status 2.
    """

    message: str
    suggestions: tuple[str, ...] = ()  # close command names, for an unknown command


@dataclass(frozen=True, slots=True)
class CompactionStarted:
    trigger: Literal["manual", "auto", "overflow"]


@dataclass(frozen=True, slots=True)
class DroppedItem:
    """Something a compaction took out of the context (the session file still has it)."""

    kind: Literal["file", "output", "message"]  # a file read, another tool's output, a message
    label: str  # the path, the command, or the tool and its arguments
    tokens: int
    spill_file: str | None = None  # where the whole output was saved, when it was


@dataclass(frozen=True, slots=True)
class CompactionFinished:
    trigger: Literal["manual", "auto", "overflow"]
    tokens_before: int
    tokens_after: int
    items_before: int
    items_after: int
    trimmed: int = 0
    summary: str = ""
    applied: bool = True  # False when the result was not smaller and the old history was kept
    fallback: bool = False  # summarizer failed; a head+tail truncation was used
    dropped: tuple[DroppedItem, ...] = ()  # what left the context (`/compact show` lists it)


@dataclass(frozen=True, slots=True)
class NetworkRequest:
    """A sandboxed command's connection through the network proxy was allowed or refused; told
    once per host, port and answer to each command running then (agent_cli/network/)."""

    call_id: str  # the shell call that was running
    host: str
    port: int
    allowed: bool
    by: str  # what decided: the list entry and its file, the user's answer, why it was refused


@dataclass(frozen=True, slots=True)
class SubagentEvent:
    """Something a subagent's session emitted while the ``task`` call ``call_id`` runs it."""

    call_id: str
    agent: str
    event: Event


@dataclass(frozen=True, slots=True)
class SubagentFinished:
    """A subagent ended; its final message is what the ``task`` call returns to the model."""

    call_id: str
    agent: str
    description: str
    status: Literal["completed", "failed", "interrupted"]
    final_message: str | None
    usage: Usage  # the subagent's own tokens (and its subagents')
    transcript: str  # the child's session file


@dataclass(frozen=True, slots=True)
class WebSearch:
    """The provider searched the web (its own tool): the query and the results it reported."""

    call_id: str
    query: str
    sources: tuple[WebSource, ...] = ()
    status: str = "completed"


@dataclass(frozen=True, slots=True)
class WebCitations:
    """The web sources the answer just given cites."""

    sources: tuple[WebSource, ...]


@dataclass(frozen=True, slots=True)
class BackgroundProcessInfo:
    """One background process as front ends show it (``/ps``, notices, the status bar)."""

    id: str
    command: str
    pid: int
    runtime: float  # seconds, so far or until it ended
    exit_code: int | None  # None while it runs
    killed: bool = False
    last_lines: tuple[str, ...] = ()
    log_path: str = ""
    keep_alive: bool = False


@dataclass(frozen=True, slots=True)
class BackgroundProcessStarted:
    process: BackgroundProcessInfo


@dataclass(frozen=True, slots=True)
class BackgroundProcessExited:
    """Sent the moment a background process ends (between turns too, through the listeners of
    ``session.background``)."""

    process: BackgroundProcessInfo


@dataclass(frozen=True, slots=True)
class BackgroundProcessList:
    """``/ps``: the session's background processes."""

    processes: tuple[BackgroundProcessInfo, ...]


@dataclass(frozen=True, slots=True)
class CheckpointCreated:
    """The work tree was snapshotted before the turn ``turn`` changed it (/undo, /rewind)."""

    checkpoint_id: str
    turn: int
    commit: str
    files: int
    skipped: tuple[str, ...] = ()  # over the size limit: not in the snapshot
    seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class Rewound:
    """Files and/or the conversation were taken back (/undo, /rewind, `agent exec undo`)."""

    mode: Literal["undo", "code", "conversation", "both"]
    restored: tuple[str, ...] = ()  # paths written back or removed
    conflicts: tuple[str, ...] = ()  # changed by hand since: left as they are
    prompt: str | None = None  # the prompt the conversation went back to (into the composer)
    history_length: int | None = None


@dataclass(frozen=True, slots=True)
class TurnComplete:
    last_message: str | None
    stop_reason: str = "end"  # why the last answer ended: models.base STOP_* ("max_tokens" when cut off)


@dataclass(frozen=True, slots=True)
class TurnAborted:
    reason: str


@dataclass(frozen=True, slots=True)
class TurnFailed:
    message: str
    reason: str | None = None  # a limit that ended it: max_turns, max_budget, output_schema
    request_id: str | None = None  # the provider's id of the failed model request, when it sent one


@dataclass(frozen=True, slots=True)
class Diagnostics:
    """What language servers reported after an edit (agent_cli/lsp/): the new problems, as the model read them."""

    call_id: str  # the edit's tool call
    lines: tuple[str, ...]  # path:line:col: severity: message [code]
    errors: int
    warnings: int
    servers: tuple[str, ...]
    waited: float  # seconds the edit waited for them


@dataclass(frozen=True, slots=True)
class ProjectCheck:
    """A lint_command or test_command ran (after a turn that changed files, or /lint, /test)."""

    kind: Literal["lint", "test"]
    command: str
    exit_code: int | None  # None: it did not finish (timeout)
    tail: str  # the end of its output
    duration: float
    sent_to_model: bool = False  # the failure went back to the model for another round


Event = (
    TurnStarted
    | UserMessage
    | TextDelta
    | ReasoningDelta
    | AgentMessage
    | Refusal
    | ReasoningDone
    | ToolCallBegin
    | ToolOutputDelta
    | ToolTerminal
    | ToolCallEnd
    | Diagnostics
    | ProjectCheck
    | PlanUpdated
    | TokenCount
    | Retry
    | ModelWaiting
    | Warning
    | Error
    | Notice
    | ContextUsage
    | CommandAction
    | InputRejected
    | CompactionStarted
    | CompactionFinished
    | ApprovalRequest
    | NetworkRequest
    | ElicitationRequest
    | SubagentEvent
    | SubagentFinished
    | WebSearch
    | WebCitations
    | BackgroundProcessStarted
    | BackgroundProcessExited
    | BackgroundProcessList
    | CheckpointCreated
    | Rewound
    | TurnComplete
    | TurnAborted
    | TurnFailed
)
