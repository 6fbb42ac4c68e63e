"""The one entry point for what the user typed, in the TUI and in ``agent exec`` alike.

Front ends call :func:`submit` (``async for event in submit(session, text)``), which runs
:func:`run_input` in the session's turn task. A slash command runs its handler (a built-in, or a
command file expanded into a model turn); anything else is a prompt whose ``@path`` and
``` !`cmd` ``` are expanded before the turn. Bad input ends as an
:class:`~agent_cli.events.InputRejected` event and nothing reaches the model.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import TYPE_CHECKING
from weakref import WeakKeyDictionary

from agent_cli import events as ev
from agent_cli.commands.custom import CustomCommand, allowed_tool_names, substitute
from agent_cli.commands.errors import InputError
from agent_cli.commands.expand import expand, has_expansions
from agent_cli.commands.invocation import Invocation, attachment_budget, run_model_turn
from agent_cli.commands.registry import CommandTable, parse_slash
from agent_cli.commands.shell_runner import session_command_runner
from agent_cli.commands.text import Template

if TYPE_CHECKING:
    from agent_cli.session.session import Emit, Session

# Warnings about command files, shown once per session rather than on every command.
_shown_warnings: WeakKeyDictionary[Session, set[str]] = WeakKeyDictionary()


async def submit(session: Session, text: str) -> AsyncIterator[ev.Event]:
    """Run what the user typed (a slash command, or a prompt with its ``@path`` and
    ``!`cmd``` expanded) as the session's next turn and yield its events until it ends."""
    async for event in session.run_in_task(lambda emit: run_input(session, text, emit), note_interrupt=True):
        yield event


async def run_input(session: Session, text: str, emit: Emit) -> None:
    try:
        parsed = parse_slash(text)
        if parsed is None:
            await run_prompt(session, text, emit)
        else:
            await run_command(session, text.strip(), *parsed, emit)
    except InputError as exc:
        emit(ev.InputRejected(exc.message, exc.suggestions))


async def run_prompt(session: Session, text: str, emit: Emit) -> None:
    typed = None
    if has_expansions(text):
        expansion = await expand(
            Template.typed(text), cwd=session.config.cwd, max_bytes=attachment_budget(session),
            run_command=session_command_runner(session, emit),
        )
        if expansion.text != text:
            typed, text = text, expansion.text
    await session._turn(text, emit, typed)


async def run_command(session: Session, typed: str, name: str, args: str, emit: Emit) -> None:
    table = CommandTable.for_session(session)
    shown = _shown_warnings.setdefault(session, set())
    for warning in table.warnings:
        if warning not in shown:
            shown.add(warning)
            emit(ev.Warning(warning))
    resolved = table.resolve(name)
    invocation = Invocation(session, emit, name, args, typed, table)
    if resolved.builtin is not None:
        await resolved.builtin.handler(invocation)
    elif resolved.custom is not None:
        await run_custom(invocation, resolved.custom)


async def run_custom(inv: Invocation, command: CustomCommand) -> None:
    session = inv.session
    template = substitute(command.body, inv.args)
    if not template.text.strip():
        raise InputError(f"/{command.name}: {command.path} has no prompt text")
    only_tools = None
    if command.allowed_tools:
        only_tools, unknown = allowed_tool_names(command.allowed_tools, session.tools.names)
        if unknown:
            inv.emit(ev.Warning(f"{command.path}: allowed-tools names no tool called {', '.join(unknown)} "
                                f"(tools: {', '.join(session.tools.names)})"))
    expansion = await expand(
        template, cwd=session.config.cwd, max_bytes=attachment_budget(session),
        run_command=session_command_runner(session, inv.emit),
    )
    await run_model_turn(session, expansion.text, inv.emit, typed=inv.typed, only_tools=only_tools, model=command.model)
