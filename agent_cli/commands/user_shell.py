"""``!command``: the user runs a shell command in the session, as in Codex and Claude Code.

It runs like the model's commands (approval policy, sandbox, timeout, output truncation; the
front ends see a tool cell) and its result is added to the conversation as a user shell record,
so the model sees what the user ran and what it printed when the next prompt is sent. No model
turn starts. ``agent exec "!make test"`` does the same.
"""

from __future__ import annotations

from agent_cli.commands.errors import InputError
from agent_cli.commands.shell_runner import session_command_runner
from agent_cli.items import user
from agent_cli.session.session import Emit, Session

PREFIX = "!"


def shell_command_of(text: str) -> str | None:
    """The command of a ``!command`` line; None for anything else (``!`cmd``` is an expansion)."""
    stripped = text.lstrip()
    if not stripped.startswith(PREFIX) or stripped.startswith("!`"):
        return None
    return stripped[len(PREFIX) :].strip()


def shell_record(command: str, output: str) -> str:
    """The user message the model reads: what the user ran and what it printed."""
    return (
        f"<user_shell_command>\n<command>{command}</command>\n<result>\n{output.rstrip()}\n</result>\n"
        "</user_shell_command>"
    )


async def run_user_shell(session: Session, command: str, emit: Emit) -> None:
    if not command:
        raise InputError("type a command after ! (e.g. !git status)")
    session.start_context(emit)  # the record must come after the initial context
    try:
        run = await session_command_runner(session, emit)(command)
    except InputError as exc:
        raise InputError(exc.message.replace(f"!`{command}`", f"!{command}", 1)) from None
    session.record(user(shell_record(command, run.output)))
    emit(session.token_count_event())
