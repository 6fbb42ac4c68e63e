"""The one entry every front end drives a session through: operations in, typed events out.

``async for event in Conversation(session, front_end).submit(op)`` applies one operation
(operations.py) and yields its events until it is done. :meth:`Conversation.route` says once,
for every front end alike, when it runs:

- now: in the session's task (:meth:`Session.run_in_task`: one at a time, stopped by
  ``Interrupt`` with a valid history);
- queue: after the running work (a prompt, a command, a mode or model switch, a rewind: all
  change the history). A front end with a queue of its own keeps it (the TUI shows it);
  otherwise ``submit`` waits for the session to be idle;
- beside: at once, during a turn too (a command that only reports, ``Steer``, ``Interrupt``,
  the approval policy, the sandbox, grants, hooks);
- refused: ``/resume`` during a turn, ``# text`` while memory is off, ``Steer`` with no turn.

Approvals keep travelling as ``ApprovalRequest`` events that carry a future: the first
``request.answer(decision)`` wins, so several clients may be shown one request.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from agent_cli import events as ev
from agent_cli.commands.catalog import CommandInfo
from agent_cli.commands.checkpoint_commands import fork, rewind
from agent_cli.commands.compaction_commands import compact
from agent_cli.commands.dispatch import load_images, run_command, run_prompt
from agent_cli.commands.errors import InputError
from agent_cli.commands.front_end import FrontEnd
from agent_cli.commands.host_settings import add_hooks, approve_for_session, set_approval_policy, set_sandbox
from agent_cli.commands.memory_command import shortcut_command, shortcut_off_text
from agent_cli.commands.registry import list_commands
from agent_cli.commands.session_commands import set_mode, set_model
from agent_cli.commands.typed_input import command_line, read_input
from agent_cli.commands.user_shell import run_user_shell
from agent_cli.operations import (
    MODES,
    AddHooks,
    ApproveForSession,
    Compact,
    Fork,
    Interrupt,
    Operation,
    Rewind,
    RunCommand,
    SetApprovalPolicy,
    SetMode,
    SetModel,
    SetSandbox,
    Setting,
    ShellCommand,
    Steer,
    UserInput,
    UserTurn,
)
from agent_cli.session.session import Emit, Session

When = Literal["now", "queue", "beside", "refused"]
# Applied at once, during a turn too: they change how later tool calls run, never the history.
BESIDE = (Interrupt, SetApprovalPolicy, SetSandbox, ApproveForSession, AddHooks)
# What routes and messages call an operation that is no slash command of its own.
NAMES: dict[type, str] = {
    SetMode: "mode",
    SetModel: "model",
    Rewind: "rewind",
    Compact: "compact",
    Fork: "fork",
    Interrupt: "interrupt",
    SetApprovalPolicy: "approvals",
    SetSandbox: "sandbox",
    ApproveForSession: "permissions",
    AddHooks: "hooks",
}
NO_TURN_TO_STEER = "no model turn is running to steer: send it as a prompt"


@dataclass(frozen=True, slots=True)
class Route:
    """How a front end runs an operation (:meth:`Conversation.route`)."""

    when: When
    command: str | None = None  # the command's name; None for a prompt or !command (shown as the user's message)
    reason: str = ""  # why it was refused


class Driven(Protocol):
    """What a front end drives: a session in this process (:class:`Conversation`) or one in a host
    (``remote/conversation.py``, over the app-server protocol), through the same operations."""

    @property
    def model(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def provider(self) -> str: ...
    @property
    def modes(self) -> tuple[str, ...]:
        """The modes it can switch to (Shift+Tab cycles them)."""
        ...

    def route(self, op: Operation, *, busy: bool | None = None) -> Route: ...

    def submit(self, op: Operation, *, busy: bool | None = None) -> AsyncIterator[ev.Event]: ...

    def commands(self) -> list[CommandInfo]:
        """The slash commands it runs, for completion and /help."""
        ...

    def interrupt(self) -> None:
        """Stop the running work now (a key handler cannot wait for an operation's events)."""

    def token_count(self) -> ev.TokenCount | None:
        """What the context holds now, as the status bar shows it."""
        ...


class Conversation:
    """A session as front ends drive it. Cheap: make one where needed; what lasts is the session's."""

    def __init__(self, session: Session, front_end: FrontEnd | None = None):
        self.session = session
        self.front_end = front_end  # what commands may ask of it beyond events (commands/front_end.py)

    # --- what it is now ----------------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.session.model

    @property
    def mode(self) -> str:
        return self.session.mode

    @property
    def provider(self) -> str:
        return self.session.config.provider.id

    @property
    def modes(self) -> tuple[str, ...]:
        return MODES

    def commands(self) -> list[CommandInfo]:
        return list_commands(self.session)

    def interrupt(self) -> None:
        self.session.interrupt()

    def token_count(self) -> ev.TokenCount | None:
        return self.session.token_count_event()

    # --- when ------------------------------------------------------------------------------

    def route(self, op: Operation, *, busy: bool | None = None) -> Route:
        """Whether ``op`` runs now, after the running work, beside it, or is refused. ``busy``:
        whether the front end has work running (default: whether the session's task runs)."""
        busy = self.session.running if busy is None else busy
        match op:
            case UserInput():
                if self._memory_off(op.text):
                    return Route("refused", "memory", shortcut_off_text())
                try:
                    return self.route(self._read(op), busy=busy)
                except InputError:  # a bare "/": it says what is missing when it runs
                    return Route("queue" if busy else "now", "")
            case UserTurn() | ShellCommand():
                return Route("queue" if busy else "now")
            case Steer():
                return Route("beside", "steer") if busy else Route("refused", "steer", NO_TURN_TO_STEER)
            case RunCommand(name=name):
                info = next((i for i in list_commands(self.session) if i.name == name), None) if busy else None
                if info is not None and info.busy_refusal:
                    return Route("refused", name, info.busy_refusal)
                if info is not None and not info.needs_idle:
                    return Route("beside", name)
                return Route("queue" if busy else "now", name)
            case _ if isinstance(op, BESIDE):
                return Route("beside", NAMES[type(op)])
            case _:
                return Route("queue" if busy else "now", NAMES[type(op)])

    # --- applying --------------------------------------------------------------------------

    async def submit(self, op: Operation, *, busy: bool | None = None) -> AsyncIterator[ev.Event]:
        """Apply ``op`` as :meth:`route` says and yield its events until it is done. ``busy`` as
        for :meth:`route`: a front end that decided with its own idea of busy passes it again."""
        plan = self.route(op, busy=busy)
        if plan.when == "refused":
            yield ev.InputRejected(plan.reason)
            return
        if plan.when == "beside":  # reads the session, or changes what no turn step holds
            events: list[ev.Event] = []
            await self._apply(op, events.append)
            for event in events:
                yield event
            return
        if plan.when == "queue":
            await self.session.wait_idle()
        async for event in self.session.run_in_task(lambda emit: self._apply(op, emit), note_interrupt=True):
            yield event

    async def _apply(self, op: Operation, emit: Emit) -> None:
        try:
            await self._apply_one(op, emit)
        except InputError as exc:
            emit(ev.InputRejected(exc.message, exc.suggestions))

    async def _apply_one(self, op: Operation, emit: Emit) -> None:
        session = self.session
        match op:
            case UserInput():
                if self._memory_off(op.text):
                    emit(ev.Warning(shortcut_off_text()))
                    return
                await self._apply_one(self._read(op), emit)
            case UserTurn(text=text, images=images, settings=settings):
                for setting in settings:
                    await self._apply_setting(setting, emit)
                await run_prompt(session, text, emit, images)
            case Steer(text=text, images=images):
                if not session.steer(text, await load_images(session, images)):
                    raise InputError(NO_TURN_TO_STEER)
            case Interrupt():
                session.interrupt()
            case SetMode() | SetModel() | SetApprovalPolicy() | SetSandbox():
                await self._apply_setting(op, emit)
            case AddHooks():
                add_hooks(session, op, emit)
            case ApproveForSession():
                approve_for_session(session, op, emit)
            case Rewind():
                await rewind(session, op, emit)
            case Compact():
                await compact(session, op, emit)
            case Fork():
                fork(session, op, emit)
            case RunCommand(name=name, arguments=arguments):
                await run_command(session, command_line(op), name, arguments, emit, self.front_end)
            case ShellCommand(command=command):
                await run_user_shell(session, command, emit)

    async def _apply_setting(self, op: Setting, emit: Emit) -> None:
        match op:
            case SetMode():
                set_mode(self.session, op, emit)
            case SetModel():
                await set_model(self.session, op, emit)
            case SetApprovalPolicy():
                set_approval_policy(self.session, op, emit)
            case SetSandbox():
                set_sandbox(self.session, op, emit)

    # --- typed input -----------------------------------------------------------------------

    def _read(self, op: UserInput) -> Operation:
        return read_input(op.text, op.images, memory_shortcut=self._shortcuts)

    @property
    def _shortcuts(self) -> bool:
        return self.front_end is not None and self.front_end.memory_shortcut

    def _memory_off(self, text: str) -> bool:
        """``# text`` where it saves a memory, while memory is off: neither saved nor sent."""
        return self._shortcuts and shortcut_command(text) is not None and not self.session.config.memory


async def submit(
    session: Session, text: str, images: Sequence[Path] = (), front_end: FrontEnd | None = None
) -> AsyncIterator[ev.Event]:
    """What the user typed, applied (``UserInput``): for tests and scripts that type."""
    async for event in Conversation(session, front_end).submit(UserInput(text, tuple(images))):
        yield event
