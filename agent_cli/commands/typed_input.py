"""What typed text asks for, as an operation: the slash commands are a parser, not an API.

``/mode plan`` is ``SetMode("plan")``, ``/rewind 3 code --yes`` ``Rewind(3, "code", True)``,
``!make test`` ``ShellCommand("make test")``, anything else a ``UserTurn`` (a prompt). A
command without an operation of its own, or with arguments its operation does not take, is
``RunCommand(name, arguments)``: its handler reads the arguments and says what is wrong. So a
typed line and the operation a front end sends take the same path (commands/conversation.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from agent_cli.commands.checkpoint_commands import YES, fork_form, rewind_form
from agent_cli.commands.compaction_commands import compact_form
from agent_cli.commands.dispatch import slash_command
from agent_cli.commands.errors import InputError
from agent_cli.commands.memory_command import shortcut_command
from agent_cli.commands.session_commands import mode_form, model_form
from agent_cli.commands.user_shell import PREFIX as SHELL_PREFIX
from agent_cli.commands.user_shell import shell_command_of
from agent_cli.operations import (
    Compact,
    Fork,
    Operation,
    Rewind,
    RunCommand,
    SetMode,
    SetModel,
    ShellCommand,
    UserInput,
    UserTurn,
)

# The built-in commands that are operations of their own, and how their arguments read as one.
FORMS: dict[str, Callable[[str], Operation | None]] = {
    "mode": mode_form,
    "model": model_form,
    "rewind": rewind_form,
    "compact": compact_form,
    "fork": fork_form,
}


def read_input(text: str, images: Sequence[Path] = (), *, memory_shortcut: bool = False) -> Operation:
    """The operation ``text`` (with ``images`` attached) stands for. ``memory_shortcut``: the
    front end makes ``# text`` a ``/memory add`` (the TUI). Raises InputError for what cannot be
    read: a bare ``/``, images attached to a command."""
    if memory_shortcut and (shortcut := shortcut_command(text)) is not None:
        text = shortcut
    parsed = slash_command(text)
    if parsed is None:
        if not images and (command := shell_command_of(text)) is not None:
            return ShellCommand(command)
        return UserTurn(text, tuple(images))
    name, arguments = parsed
    if images:
        raise InputError(f"/{name}: images can be attached to a prompt, not to a slash command")
    form = FORMS.get(name)
    return (form(arguments) if form is not None else None) or RunCommand(name, arguments)


def command_line(op: Operation) -> str:
    """How ``op`` is typed, where it has a typed form (a queued operation is shown so, and reads
    back as the same operation); otherwise its name."""
    match op:
        case UserInput(text=text) | UserTurn(text=text):
            return text
        case ShellCommand(command=command):
            return f"{SHELL_PREFIX}{command}"
        case SetMode(mode=mode):
            return f"/mode {mode}"
        case SetModel(model=model):
            return f"/model {model}"
        case Rewind(prompt=prompt, part=part, confirmed=confirmed):
            return f"/rewind {prompt} {part}" + (f" {YES}" if confirmed else "")
        case Compact(focus=focus):
            return f"/compact {focus}" if focus else "/compact"
        case Fork(prompt=prompt):
            return f"/fork {prompt}" if prompt is not None else "/fork"
        case RunCommand(name=name, arguments=arguments):
            return f"/{name} {arguments}".rstrip()
        case _:
            return type(op).__name__
