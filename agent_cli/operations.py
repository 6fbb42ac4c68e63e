"""Operations: everything a front end asks of a session, as typed values (Codex's ``Op``).

Every front end (the TUI, ``agent exec``, ``agent acp``, the stream-json front end, the app
server) sends these to :class:`agent_cli.commands.conversation.Conversation` and reads the
typed events (``events.py``) that come back: ``async for event in conversation.submit(op)``.
Slash commands are a parser that produces them (``/mode plan`` is ``SetMode("plan")``), so what
is typed and what a front end sends take one path. No front end writes into a session's parts.

Codex's names, for the app server: ``turn/start`` is :class:`UserTurn` (its overrides as
``settings``), ``turn/steer`` :class:`Steer`, ``turn/interrupt`` :class:`Interrupt`,
``thread/compact/start`` :class:`Compact`, ``thread/fork`` :class:`Fork`, ``thread/rollback``
:class:`Rewind` (conversation only), ``review/start`` ``RunCommand("review", ...)``;
``Op::OverrideTurnContext`` is the settings: :class:`SetMode`, :class:`SetModel`,
:class:`SetApprovalPolicy`, :class:`SetSandbox`.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal, TypeGuard, get_args

from agent_cli.hooks.spec import HookSpec

Mode = Literal["agent", "ask", "plan"]
ApprovalPolicy = Literal["untrusted", "on-request", "on-failure", "never"]
SandboxMode = Literal["read-only", "workspace-write", "danger-full-access"]
RewindPart = Literal["both", "conversation", "code"]
RuleBehavior = Literal["allow", "deny", "ask"]
MODES: tuple[Mode, ...] = get_args(Mode)
APPROVAL_POLICIES: tuple[ApprovalPolicy, ...] = get_args(ApprovalPolicy)
SANDBOX_MODES: tuple[SandboxMode, ...] = get_args(SandboxMode)
REWIND_PARTS: tuple[RewindPart, ...] = get_args(RewindPart)


def is_mode(value: str) -> TypeGuard[Mode]:
    return value in MODES


def is_approval_policy(value: str) -> TypeGuard[ApprovalPolicy]:
    return value in APPROVAL_POLICIES


def is_sandbox_mode(value: str) -> TypeGuard[SandboxMode]:
    return value in SANDBOX_MODES


def is_rewind_part(value: str) -> TypeGuard[RewindPart]:
    return value in REWIND_PARTS


@dataclass(frozen=True, slots=True)
class UserInput:
    """What the user typed in a front end, for the command layer to read: a slash command, a
    ``!command``, ``# text`` where the front end offers that shortcut, or else a prompt
    (:class:`UserTurn`). Front ends pass it on as typed; they never write command text themselves."""

    text: str
    images: tuple[Path, ...] = ()  # image files attached to it (``agent exec -i``, pasted images)


@dataclass(frozen=True, slots=True)
class SetMode:
    """The mode from the next request on: agent (every tool), ask (read-only) or plan. The model
    reads the change as a new fragment; the system prompt is rebuilt at the next compaction."""

    mode: Mode


@dataclass(frozen=True, slots=True)
class SetModel:
    """The model from the next request on. ``verify``: check the name against what the provider
    serves first, and ask (or warn) when it is unknown, as ``/model NAME`` does."""

    model: str
    verify: bool = False


@dataclass(frozen=True, slots=True)
class SetApprovalPolicy:
    """When tool calls ask the user, from the next call on (Codex's ``approval_policy``)."""

    policy: ApprovalPolicy


@dataclass(frozen=True, slots=True)
class SetSandbox:
    """The sandbox later commands and patches run in (Codex's ``sandbox_mode``), with the
    session's folder, writable roots and network setting. Language servers keep the one they
    started with."""

    mode: SandboxMode


Setting = SetMode | SetModel | SetApprovalPolicy | SetSandbox


@dataclass(frozen=True, slots=True)
class UserTurn:
    """A prompt: one model turn for ``text`` (``@path`` and ``` !`cmd` ``` expanded, as typed in a
    front end; never read as a command). ``settings`` apply first, for this turn and the ones
    after (the overrides of Codex's ``turn/start``)."""

    text: str
    images: tuple[Path, ...] = ()
    settings: tuple[Setting, ...] = ()


@dataclass(frozen=True, slots=True)
class Steer:
    """More input for the running model turn (Codex's ``turn/steer``): the model reads it before
    its next request, and a turn about to end goes on. Refused when no model turn runs. Taken
    as written: no ``@path`` expansion."""

    text: str
    images: tuple[Path, ...] = ()


@dataclass(frozen=True, slots=True)
class Interrupt:
    """Stop what runs in the session (a turn, a command, a compaction); the history stays valid
    and the work ends with ``TurnAborted``."""


@dataclass(frozen=True, slots=True)
class AddHooks:
    """Hooks a host adds for the rest of the session (the Claude Agent SDK's callbacks), after
    those of the config, settings files and plugins."""

    hooks: tuple[HookSpec, ...]


@dataclass(frozen=True, slots=True)
class ApproveForSession:
    """What the host grants for the rest of the session, as a person's "yes, for this session":
    one of a permission ``rule`` in Claude Code's syntax (``Bash(npm test:*)``, ``Edit``) with its
    ``behavior``, a ``command_prefix`` (Codex's: ``("git", "status")`` allows every command that
    starts with those words), or whole ``tools`` (``apply_patch``: every edit inside the sandbox,
    as Claude's acceptEdits). ``withdraw`` takes ``tools`` back. Nothing is written to a file."""

    rule: str | None = None
    behavior: RuleBehavior = "allow"
    command_prefix: tuple[str, ...] = ()
    tools: tuple[str, ...] = ()
    withdraw: bool = False
    source: str = "the host"  # named where /permissions lists the rule


@dataclass(frozen=True, slots=True)
class Rewind:
    """Go back to before prompt ``prompt`` (1 is the first since the start or the last
    compaction; -1 the last, so ``thread/rollback``'s ``numTurns`` N is ``-N``): its files
    (``code``), its conversation (the prompt comes back to edit) or both. Restoring files asks
    first unless ``confirmed``."""

    prompt: int
    part: RewindPart = "both"
    confirmed: bool = False


@dataclass(frozen=True, slots=True)
class Compact:
    """Summarize the conversation now; ``focus`` says what the summary should keep."""

    focus: str | None = None


@dataclass(frozen=True, slots=True)
class Fork:
    """Copy the conversation (up to before prompt ``prompt``; all of it when None) into a new
    session file. Ends with ``CommandAction("resume", <the new file>)`` for the front end to open."""

    prompt: int | None = None


@dataclass(frozen=True, slots=True)
class RunCommand:
    """A user-facing slash command by name, with its arguments as typed after it (``review``,
    ``init``, ``status``, a command file, an MCP prompt)."""

    name: str
    arguments: str = ""


@dataclass(frozen=True, slots=True)
class ShellCommand:
    """``!command``: the user runs a command in the session's shell (Codex's
    ``RunUserShellCommand``); the model reads it and its output with the next prompt."""

    command: str


Operation = (
    UserInput
    | UserTurn
    | Steer
    | Interrupt
    | SetMode
    | SetModel
    | SetApprovalPolicy
    | SetSandbox
    | AddHooks
    | ApproveForSession
    | Rewind
    | Compact
    | Fork
    | RunCommand
    | ShellCommand
)
