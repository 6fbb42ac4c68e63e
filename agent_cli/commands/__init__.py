"""Slash commands, custom command files, and ``@path`` / ``` !`cmd` ``` expansion.

Front ends send everything the user types to ``Session.submit``, which routes it through
:func:`agent_cli.commands.dispatch.run_input`. For completion and ``/help`` they call
:func:`list_commands`.
"""

from agent_cli.commands.registry import CommandInfo, list_commands, parse_slash

__all__ = ["CommandInfo", "list_commands", "parse_slash"]
