"""The one router of what the user typed, in the TUI, ``agent exec`` and ``agent acp`` alike.

Front ends call :func:`submit` (``async for event in submit(session, text)``). It asks the
session to run :func:`run_input` as its running task (:meth:`Session.run_in_task`: one at a
time, stopped by :meth:`Session.interrupt` with a valid history) and yields the events. Here the
input is routed: a slash command runs its handler (a built-in, or a command file expanded into a
model turn), ``!command`` runs in the session's shell, anything else is a prompt whose ``@path``
and ``` !`cmd` ``` are expanded before :meth:`Session.turn`. Bad input ends as an
:class:`~agent_cli.events.InputRejected` event and nothing reaches the model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Literal
from weakref import WeakKeyDictionary

from agent_cli import events as ev
from agent_cli.commands.custom import CustomCommand, allowed_tool_names, substitute
from agent_cli.commands.errors import InputError
from agent_cli.commands.expand import expand
from agent_cli.commands.front_end import FrontEnd
from agent_cli.commands.invocation import Invocation, attachment_budget, file_settings, run_model_turn
from agent_cli.commands.mcp_commands import resource_reader, run_mcp_prompt
from agent_cli.commands.memory_command import shortcut_command, shortcut_off_text
from agent_cli.commands.registry import CommandTable, list_commands, parse_slash
from agent_cli.commands.shell_runner import session_command_runner
from agent_cli.commands.text import Template
from agent_cli.commands.user_shell import run_user_shell, shell_command_of
from agent_cli.files.images import ImageError, load_image_file
from agent_cli.items import Image
from agent_cli.tools.claude_names import resolve_model
from agent_cli.tools.daemon_thread import in_thread

if TYPE_CHECKING:
    from agent_cli.session.session import Emit, Session

# Warnings about command files, shown once per session rather than on every command.
_shown_warnings: WeakKeyDictionary[Session, set[str]] = WeakKeyDictionary()


@dataclass(frozen=True, slots=True)
class Route:
    """How a front end runs what was typed (:func:`route`)."""

    when: Literal["now", "queue", "beside", "refused"]  # beside: a command that only reports, during a turn
    command: str | None = None  # the command's name; None for a prompt (shown as the user's message)
    reason: str = ""  # why it was refused


def route(session: Session, text: str, *, busy: bool, front_end: FrontEnd | None = None) -> Route:
    """Whether ``text`` runs now, waits for the running turn, runs beside it, or is refused. A
    prompt and most commands wait; a command that only reports runs beside; ``/resume`` is refused
    (the session is not swapped under a turn), and so is ``# text`` while memory is off."""
    if front_end is not None and front_end.memory_shortcut and (shortcut := shortcut_command(text)) is not None:
        if not session.config.memory:
            return Route("refused", "memory", shortcut_off_text())
        text = shortcut
    try:
        parsed = slash_command(text)
    except InputError:  # a bare "/": the command says what is missing when it runs
        parsed = ("", "")
    if parsed is None:
        return Route("queue" if busy else "now")
    info = next((info for info in list_commands(session) if info.name == parsed[0]), None) if busy else None
    if info is not None and info.busy_refusal:
        return Route("refused", parsed[0], info.busy_refusal)
    if info is not None and not info.needs_idle:
        return Route("beside", parsed[0])
    return Route("queue" if busy else "now", parsed[0])


async def submit(
    session: Session, text: str, images: Sequence[Path] = (), front_end: FrontEnd | None = None
) -> AsyncIterator[ev.Event]:
    """Run what the user typed (a slash command, or a prompt with its ``@path`` and
    ``!`cmd``` expanded) as the session's next turn and yield its events until it ends.
    ``images`` are image files attached to it (``agent exec -i``, the TUI's image chips);
    ``front_end``: what commands may ask of the front end beyond events (commands/front_end.py)."""
    async for event in session.run_in_task(
        lambda emit: run_input(session, text, emit, images, front_end), note_interrupt=True
    ):
        yield event


async def submit_beside(session: Session, text: str, front_end: FrontEnd | None = None) -> AsyncIterator[ev.Event]:
    """A command that only reports (``route`` said "beside"), run while the session's task runs a
    turn: it reads the session and never changes its history, so it needs no task of its own."""
    events: list[ev.Event] = []
    await run_input(session, text, events.append, front_end=front_end)
    for event in events:
        yield event


async def run_input(
    session: Session, text: str, emit: Emit, images: Sequence[Path] = (), front_end: FrontEnd | None = None
) -> None:
    try:
        if front_end is not None and front_end.memory_shortcut and (shortcut := shortcut_command(text)) is not None:
            if not session.config.memory:
                emit(ev.Warning(shortcut_off_text()))
                return
            text = shortcut  # `# text` saves a project memory (the TUI's shortcut)
        parsed = slash_command(text)
        if parsed is None and text.lstrip().startswith("!") and not images:
            if (command := shell_command_of(text)) is not None:
                await run_user_shell(session, command, emit)
                return
        if parsed is None:
            await run_prompt(session, text, emit, images)
        elif images:
            raise InputError(f"/{parsed[0]}: images can be attached to a prompt, not to a slash command")
        else:
            await run_command(session, text.strip(), *parsed, emit, front_end)
    except InputError as exc:
        emit(ev.InputRejected(exc.message, exc.suggestions))


def slash_command(text: str) -> tuple[str, str] | None:
    """``(name, arguments)`` of a slash command; None for a prompt."""
    if not text.lstrip().startswith("/"):
        return None
    return parse_slash(text)


def has_expansions(text: str) -> bool:
    """Cheap check before doing any work: could ``text`` hold an ``@path`` or ``` !`cmd` ``` at all?"""
    return "@" in text or "!`" in text


async def run_prompt(session: Session, text: str, emit: Emit, images: Sequence[Path] = ()) -> None:
    typed = None
    paths = list(images)
    if has_expansions(text):
        expansion = await expand(
            Template.typed(text),
            cwd=session.config.cwd,
            max_bytes=attachment_budget(session),
            run_command=session_command_runner(session, emit),
            read_resource=resource_reader(session),
            **file_settings(session),
        )
        if expansion.text != text:
            typed, text = text, expansion.text
        paths += [path for path in expansion.images if path not in paths]
    await session.turn(text, emit, typed, await load_images(session, paths))


async def load_images(session: Session, paths: Sequence[Path]) -> tuple[Image, ...]:
    """Attached images, sized for the model and stored; a bad one rejects the input."""
    if not paths:
        return ()
    loaded = []
    permissions = session.approvals.permissions
    for path in paths:
        if permissions.hides_any() and (rule := permissions.read_denied(Path(path).resolve())):
            raise InputError(f"cannot attach {path}: the permission rule `{rule}` hides it")
        try:
            loaded.append(await in_thread(load_image_file, Path(path), session.config.agent_home))
        except (ImageError, OSError) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            raise InputError(f"cannot attach {path}: {reason}") from None
    return tuple(loaded)


async def run_command(
    session: Session, typed: str, name: str, args: str, emit: Emit, front_end: FrontEnd | None = None
) -> None:
    table = CommandTable.for_session(session)
    shown = _shown_warnings.setdefault(session, set())
    for warning in table.warnings:
        if warning not in shown:
            shown.add(warning)
            emit(ev.Warning(warning))
    resolved = table.resolve(name)
    invocation = Invocation(session, emit, name, args, typed, table, front_end)
    if resolved.builtin is not None:
        await resolved.builtin.handler(invocation)
    elif resolved.custom is not None:
        await run_custom(invocation, resolved.custom)
    elif resolved.mcp_prompt is not None:
        await run_mcp_prompt(invocation, resolved.mcp_prompt)


async def run_custom(inv: Invocation, command: CustomCommand) -> None:
    session = inv.session
    template = substitute(command.body, inv.args)
    if not template.text.strip():
        raise InputError(f"/{command.name}: {command.path} has no prompt text")
    only_tools = None
    if command.allowed_tools:
        only_tools, unknown = allowed_tool_names(command.allowed_tools, session.tools.names)
        if unknown:
            inv.emit(
                ev.Warning(
                    f"{command.path}: allowed-tools names no tool called {', '.join(unknown)} "
                    f"(tools: {', '.join(session.tools.names)})"
                )
            )
    expansion = await expand(
        template,
        cwd=session.config.cwd,
        max_bytes=attachment_budget(session),
        run_command=session_command_runner(session, inv.emit),
        **file_settings(session),
    )
    model = resolve_model(command.model, session.model, session.config.provider.wire_api) if command.model else None
    await run_model_turn(
        session,
        expansion.text,
        inv.emit,
        typed=inv.typed,
        recall=inv.args,
        only_tools=only_tools,
        model=model,
        images=await load_images(session, expansion.images),
    )
