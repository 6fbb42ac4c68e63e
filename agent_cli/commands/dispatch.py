"""Running a prompt or a slash command (``UserTurn`` and ``RunCommand``; commands/conversation.py
applies every operation and calls these inside the session's task).

A prompt's ``@path`` and ``` !`cmd` ``` are expanded before :meth:`Session.turn`; a slash command
runs its handler (a built-in, a command file expanded into a model turn, an MCP prompt). Bad input
raises :class:`~agent_cli.commands.errors.InputError`, which ends as an
:class:`~agent_cli.events.InputRejected` event: nothing reaches the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from weakref import WeakKeyDictionary

from agent_cli import events as ev
from agent_cli.commands.custom import CustomCommand, allowed_tool_names, substitute
from agent_cli.commands.errors import InputError
from agent_cli.commands.expand import expand
from agent_cli.commands.front_end import FrontEnd
from agent_cli.commands.invocation import Invocation, attachment_budget, file_settings, run_model_turn
from agent_cli.commands.mcp_commands import resource_reader, run_mcp_prompt
from agent_cli.commands.registry import CommandTable, parse_slash
from agent_cli.commands.shell_runner import session_command_runner
from agent_cli.commands.text import Template
from agent_cli.files.images import ImageError, load_image_file
from agent_cli.items import Image
from agent_cli.session.session import Emit, Session
from agent_cli.tools.claude_names import resolve_model
from agent_cli.tools.daemon_thread import in_thread

# Warnings about command files, shown once per session rather than on every command.
_shown_warnings: WeakKeyDictionary[Session, set[str]] = WeakKeyDictionary()


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
