"""Slash commands as the composer sees them: a list for completion, and a way to run one.

The app talks to a :class:`CommandProvider`. :class:`SharedCommands` adapts the shared command
system (``agent_cli/commands/``, the same one ``agent exec`` uses): ``commands.conversation`` runs
a command's operation, and commands that only report may also run beside a running turn. Another
provider plugs in by changing ``COMMAND_PROVIDER`` in ``app.py``.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

from agent_cli import events as ev
from agent_cli.commands.conversation import Driven
from agent_cli.commands.errors import InputError
from agent_cli.commands.front_end import FrontEnd
from agent_cli.commands.registry import parse_slash
from agent_cli.operations import Operation

LIST_CACHE_SECONDS = 5.0  # command files are rescanned at most this often while typing


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str  # without the slash
    description: str
    argument_hint: str = ""
    needs_idle: bool = True  # False: may run while a turn is running (it only reports)


class CommandHost(FrontEnd, Protocol):
    """What a command provider may use in the app (and what commands may ask of it: FrontEnd)."""

    @property
    def conversation(self) -> Driven: ...

    async def render_events(self, events: AsyncIterator[ev.Event]) -> None:
        """Show a stream of core events as the transcript shows a turn."""

    async def handle_event(self, event: ev.Event) -> None: ...


class CommandProvider(Protocol):
    def list_commands(self) -> list[SlashCommand]: ...

    async def run(self, host: CommandHost, op: Operation, *, beside_turn: bool) -> None:
        """Run the command ``op``; ``beside_turn`` when a turn is running meanwhile."""


def parse_command(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args), by the command layer's own parser so that the TUI and
    `agent exec` agree on what is a command (``/usr/bin/env`` and ``/123`` are prompts to both)."""
    if not text.lstrip().startswith("/"):
        return None

    try:
        return parse_slash(text)
    except InputError:  # a bare "/": the command layer says what is missing when it is sent
        return None


class SharedCommands:
    """The shared command system, as the TUI's provider."""

    def __init__(self, host: CommandHost):
        self.host = host
        self._cache: tuple[float, object, list[SlashCommand]] | None = None

    def list_commands(self) -> list[SlashCommand]:
        conversation = self.host.conversation
        where = getattr(conversation, "session", conversation)  # a new session lists its own commands
        now = time.monotonic()
        if self._cache is None or self._cache[1] is not where or now - self._cache[0] > LIST_CACHE_SECONDS:
            try:
                infos = conversation.commands()
            except Exception:  # noqa: BLE001 - a broken command file must not break typing
                infos = []
            commands = [SlashCommand(i.name, i.description, i.argument_hint, i.needs_idle) for i in infos]
            self._cache = (now, where, commands)
        return self._cache[2]

    async def run(self, host: CommandHost, op: Operation, *, beside_turn: bool) -> None:
        # beside_turn: a command that only reports, while a turn runs (Conversation.route)
        await host.render_events(host.conversation.submit(op, busy=True if beside_turn else None))
