"""``/export [FILE]``: the conversation as Markdown (agent_cli/export/markdown.py), written to
FILE (relative to the session's folder) or, without one, put on the clipboard by the front end.
Writing FILE is decided as a model's write of it would be (command_writes.py)."""

from __future__ import annotations

from pathlib import Path

from agent_cli import events as ev
from agent_cli.commands.command_writes import approve_writes, write_file
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.display import home_relative
from agent_cli.export.markdown import ExportHeader, conversation_markdown
from agent_cli.session.session import Session


def session_markdown(session: Session) -> str:
    export = ExportHeader(session.id, session.model, str(session.config.cwd), session.rollout.header.created)
    return conversation_markdown(session.history.items, export)


async def export_command(inv: Invocation) -> None:
    session = inv.session
    if not session.history.items:
        raise InputError("/export: there is no conversation to export yet")
    text = session_markdown(session)
    if not inv.args:
        inv.emit(ev.CommandAction("export", text))  # the front end puts it on the clipboard
        return
    target = Path(inv.args).expanduser()
    target = target if target.is_absolute() else Path(session.config.cwd) / target
    if target.is_dir():
        raise InputError(f"/export: {inv.args} is a folder; name a file, e.g. /export conversation.md")
    (target,) = await approve_writes(session, inv.emit, f"/export {inv.args}", [(target, text)])
    try:
        write_file(target, text)
    except OSError as exc:
        raise InputError(f"/export: cannot write {inv.args}: {exc.strerror or exc}") from None
    lines = text.count("\n")
    inv.emit(ev.Notice(f"wrote the conversation to {home_relative(target)} ({lines} lines)", title="export"))
