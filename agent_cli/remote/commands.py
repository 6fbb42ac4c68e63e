"""What a front end attached to a host can do of what is typed: the operations the app-server
protocol carries (a prompt, a steer, an interrupt, the settings the next ``turn/start`` takes,
``/compact``, ``/review``), what the client answers itself (``/status``, ``/help``, ``/copy``,
``/quit``, ``/detach``), and, for everything else, why not: a command that reads or changes the
session's own process (``/diff``, ``/undo``, ``!cmd``...) runs only where the session runs."""

from __future__ import annotations

from typing import Any

from agent_cli.commands.catalog import CommandInfo
from agent_cli.commands.errors import InputError
from agent_cli.commands.review import parse_review_args

# name -> (description, argument hint, runs beside a turn)
REMOTE_COMMANDS: dict[str, tuple[str, str, bool]] = {
    "compact": ("summarize the conversation to free context (in the host)", "", False),
    "review": ("review the changes (in the host)", "[--uncommitted | --base BRANCH | --commit SHA | text]", False),
    "mode": ("show or switch the mode from the next prompt: agent or plan", "[agent|plan]", True),
    "model": ("show or switch the model from the next prompt", "[name]", True),
    "status": ("the session in the host: folder, model, approvals, sandbox, tokens", "", True),
    "copy": ("copy the last answer to the clipboard", "", True),
    "detach": ("leave; the session goes on in the host (agent attach brings it back)", "", True),
    "help": ("the commands that work on a session in a host", "", True),
    "quit": ("leave; the session goes on in the host", "", True),
}
ALIASES = {"exit": "quit"}
SHELL_HERE = "a shell command typed after ! runs in the session's own shell: the app-server protocol carries none"


def remote_commands() -> list[CommandInfo]:
    return [
        CommandInfo(name, text, hint, "builtin", needs_idle=not beside)
        for name, (text, hint, beside) in REMOTE_COMMANDS.items()
    ]


def local_only(name: str) -> str:
    """Why ``/name`` is refused on a session in a host."""
    return (
        f"/{name} runs only where the session runs (it reads or changes that process): not over the "
        f"app-server protocol. Here: {', '.join('/' + n for n in REMOTE_COMMANDS)}; "
        "`agent resume ID` opens the session in this terminal once the host has let it go"
    )


def review_target(arguments: str) -> dict[str, Any]:
    """``/review``'s arguments as ``review/start``'s target (InputError for bad ones)."""
    request = parse_review_args(arguments)
    if request.target == "base":
        return {"type": "baseBranch", "branch": request.value}
    if request.target == "commit":
        return {"type": "commit", "sha": request.value, "title": None}
    if request.rest and request.target is None:
        return {"type": "custom", "instructions": request.rest}
    if request.rest:
        raise InputError("over the app-server protocol, /review --uncommitted takes no text")
    return {"type": "uncommittedChanges"}


def help_text() -> str:
    lines = [f"/{name} {hint}".rstrip() + f" — {text}" for name, (text, hint, _) in REMOTE_COMMANDS.items()]
    return "\n".join(["This session runs in a host; what you can do from here:", *lines])
