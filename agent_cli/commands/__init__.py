"""Slash commands, custom command files, and ``@path`` / ``` !`cmd` ``` expansion.

Front ends send everything the user types to :func:`agent_cli.commands.dispatch.submit`, which
runs it as the session's next turn. For completion and ``/help`` they call
:func:`agent_cli.commands.registry.list_commands`.
"""
