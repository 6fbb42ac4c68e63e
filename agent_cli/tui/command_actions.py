"""What the TUI does for a slash command only a front end can carry out (``CommandAction``):
quit, copy, export to the clipboard, ``/new``, ``/resume``, ``/login``, ``/rewind``'s picker,
``/worktree NAME``, ``/detach``."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from agent_cli import events as ev
from agent_cli.session.hook_events import end_reason
from agent_cli.tui import first_run, rewinding
from agent_cli.tui.host_link import DetachHost, detach
from agent_cli.tui.session_switching import SessionFactory, go_to_folder, new_session, resume_session


class ActionHost(DetachHost, Protocol):
    session_factory: SessionFactory

    def copy_to_clipboard(self, text: str) -> None: ...


async def carry_out(app: ActionHost, event: ev.CommandAction) -> bool:
    """Do what ``event`` asks; True when nothing of it is left for the transcript to show."""
    text = event.argument or ""
    match event.action:
        case "quit":
            if app.remote is None:
                end_reason(app.session.hooks, "prompt_input_exit")  # SessionEnd's reason
            app.exit(0)
        case "detach":
            await detach(app, event.argument)
            return True
        case "copy":
            app.copy_to_clipboard(text)
            lines = text.count("\n") + 1
            await app.renderer.notice(f"copied the last answer ({lines} lines, {len(text)} characters)", "info", "copy")
            return True
        case "export":
            app.copy_to_clipboard(text)
            await app.renderer.notice(
                f"copied the conversation as Markdown ({text.count(chr(10))} lines)", "info", "export"
            )
            return True
        case "new":
            new_session(app, app.session_factory)
        case "resume":
            await resume_session(app, app.session_restorer, event.argument)
            return True
        case "login":
            await first_run.log_in(app)  # the set-up screen, then a session on its choice
            return True
        case "rewind":
            await rewinding.pick_and_rewind(app)  # the picker instead of the text list
            return True
        case "worktree" if event.argument:
            await go_to_folder(app, app.session_factory, Path(event.argument), event.then)
            return True
    return False
