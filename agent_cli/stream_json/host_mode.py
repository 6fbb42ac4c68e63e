"""Over the stream-json protocol the host owns the permission mode (as with Claude Code): it
changes only through the host's ``set_permission_mode`` request or a ``setMode`` in its answer to
``can_use_tool``. A user message `/mode agent` would change the mode behind the host's back (a
host that started the session in plan mode went on believing it, while the next command wrote
files), so a message that reads as a mode switch (``SetMode``, or ``/mode`` with arguments it
cannot read) is refused here with the reason, and ``system/init`` always says the mode in force."""

from __future__ import annotations

from agent_cli.commands.builtins import BUILTINS
from agent_cli.commands.typed_input import command_line
from agent_cli.operations import Operation, RunCommand, SetMode

# Built-ins that change the mode when given an argument (alone they only show it).
HOST_OWNED = frozenset(
    name for builtin in BUILTINS if builtin.name == "mode" for name in (builtin.name, *builtin.aliases)
)


def refusal(op: Operation) -> str | None:
    """Why ``op`` (what a user message reads as) is not run over this protocol; None when it may run."""
    if isinstance(op, SetMode) or (isinstance(op, RunCommand) and op.name in HOST_OWNED and op.arguments):
        return (
            f"{command_line(op)} is not run here: over the SDK protocol the host sets the permission mode "
            "(set_permission_mode, or setMode in a can_use_tool answer), so the mode stays as the host knows it"
        )
    return None


def mode_in_force(session_mode: str, chosen: str) -> str:
    """Claude's permission mode for what the session does now (``chosen``: the last the host set)."""
    if session_mode == "plan":
        return "plan"
    return "default" if chosen == "plan" else chosen
