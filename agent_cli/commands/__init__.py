"""Slash commands, custom command files, and ``@path`` / ``` !`cmd` ``` expansion.

Front ends send everything the user types to :func:`agent_cli.commands.dispatch.submit`, which
runs it as the session's next turn. For completion and ``/help`` they call
:func:`list_commands`.
"""

__all__ = ["CommandInfo", "list_commands", "parse_slash"]


def __getattr__(name: str):
    # Loaded on first use: importing any module of this package (the dispatcher, on every
    # `agent exec`) must not load every built-in command with it.
    if name in __all__:
        from agent_cli.commands import registry

        return getattr(registry, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
