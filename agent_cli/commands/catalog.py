"""The command table as a command reads it (``/help``, ``/plugins``), below the commands themselves.

registry.py's ``CommandTable`` holds the built-ins, and the built-ins' handlers get the table in
their :class:`~agent_cli.commands.invocation.Invocation`: they see it through
:class:`CommandCatalog`, so no command imports the registry that imports it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from agent_cli.commands.custom import CustomCommand


@dataclass(frozen=True, slots=True)
class CommandInfo:
    name: str  # without the slash, e.g. "review" or "git:commit"
    description: str
    argument_hint: str
    source: str  # "builtin", "repo", "user", "plugin NAME" or "mcp"
    needs_idle: bool = True  # False: may run while a turn is running (it only reports)
    busy_refusal: str | None = None  # refused, not queued, while a turn runs (/resume), saying this


class CommandCatalog(Protocol):
    """What a command may ask of the command table (registry.py's ``CommandTable``)."""

    warnings: tuple[str, ...]
    custom: dict[str, CustomCommand]  # command files and plugins' commands, by name

    @property
    def aliases(self) -> Mapping[str, CustomCommand]:
        """A plugin command's plain name, when nothing else has it."""
        ...

    def infos(self) -> list[CommandInfo]: ...

    def help_lines(self, name: str) -> tuple[str, list[str]]: ...
