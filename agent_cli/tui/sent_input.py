"""What the app sends: what the user typed (with the images pasted for it), or an operation the
app makes itself (Shift+Tab's mode, the rewind picker's choice, a palette entry, a worktree's
set-up command). Both queue as text while a turn runs; an operation shows as it would be typed,
and taken back into the composer it reads as the same operation again."""

from __future__ import annotations

from agent_cli.commands.typed_input import command_line
from agent_cli.operations import Operation, UserInput


class QueuedOperation(str):
    """An operation of the app's own, as the queue shows it (its typed form)."""

    operation: Operation

    def __new__(cls, operation: Operation) -> QueuedOperation:
        shown = super().__new__(cls, command_line(operation))
        shown.operation = operation
        return shown


def operation_of(text: str) -> Operation:
    """The operation to send for ``text``: the app's own, or what was typed (``UserInput``)."""
    if isinstance(text, QueuedOperation):
        return text.operation
    return UserInput(str(text), tuple(getattr(text, "images", ())))
