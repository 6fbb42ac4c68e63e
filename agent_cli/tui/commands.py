"""Slash commands as the composer sees them: a list for completion, and a way to run one.

The app talks to a :class:`CommandProvider`. :class:`BuiltinCommands` is the day-one list; the
shared command system (``agent_cli/commands/``) replaces it through an adapter with the same two
methods, by changing ``COMMAND_PROVIDER`` in ``app.py``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from agent_cli import events as ev
from agent_cli.tui.formatting import home_relative, tokens

if TYPE_CHECKING:
    from agent_cli.session import Session


@dataclass(frozen=True, slots=True)
class SlashCommand:
    name: str  # without the slash
    description: str
    needs_idle: bool = True  # wait for the running turn to end (queued like a message)


class CommandHost(Protocol):
    """What a command may do to the app."""

    @property
    def session(self) -> Session: ...

    async def render_events(self, events: AsyncIterator[ev.Event]) -> None:
        """Show a stream of core events as the transcript shows a turn (compaction, a review...)."""

    async def submit_prompt(self, text: str) -> None:
        """Send ``text`` to the model as if the user had typed it (expanded command files)."""

    def show(self, event: ev.Event) -> None:
        """Show one event (a Notice, an Error...)."""

    def new_session(self) -> None: ...

    def quit(self) -> None: ...


class CommandProvider(Protocol):
    def list_commands(self) -> list[SlashCommand]: ...

    async def run(self, host: CommandHost, name: str, args: str) -> bool:
        """Run ``/name args``; False when ``name`` is not a command."""


def parse_command(text: str) -> tuple[str, str] | None:
    """``/name args`` -> (name, args). A path such as ``/usr/bin/env`` is not a command."""
    stripped = text.strip()
    if not stripped.startswith("/"):
        return None
    parts = stripped[1:].split(maxsplit=1)
    if not parts or "/" in parts[0]:
        return None
    return parts[0], parts[1] if len(parts) > 1 else ""


Handler = Callable[["CommandHost", str], Awaitable[None]]


class BuiltinCommands:
    """The TUI's own commands, until the shared command system takes over."""

    def __init__(self) -> None:
        self._handlers: dict[str, tuple[SlashCommand, Handler]] = {}
        self._add(SlashCommand("compact", "summarize the conversation to free context [focus]"), compact)
        self._add(SlashCommand("new", "start a fresh session with the same settings"), new)
        self._add(SlashCommand("status", "model, provider, directory, policy and token usage", False), status)
        self._add(SlashCommand("help", "commands and keys", False), self._help)
        self._add(SlashCommand("quit", "exit the app", False), quit_)

    def _add(self, command: SlashCommand, handler: Handler) -> None:
        self._handlers[command.name] = (command, handler)

    def list_commands(self) -> list[SlashCommand]:
        return [command for command, _ in self._handlers.values()]

    async def run(self, host: CommandHost, name: str, args: str) -> bool:
        entry = self._handlers.get(name)
        if entry is None:
            return False
        await entry[1](host, args)
        return True

    async def _help(self, host: CommandHost, args: str) -> None:
        host.show(ev.Notice(help_text(self.list_commands()), title="help"))


KEYS_HELP = (
    ("enter", "send (queued while a turn runs)"),
    ("shift+enter / ctrl+j", "new line"),
    ("up / down", "walk the input history"),
    ("@", "mention a file"),
    ("/", "commands"),
    ("esc", "interrupt the running turn"),
    ("ctrl+c twice", "quit"),
    ("ctrl+p", "command palette (themes and actions)"),
)


def help_text(commands: list[SlashCommand]) -> str:
    width = max(len(command.name) for command in commands) + 2
    lines = [f"/{command.name.ljust(width)}{command.description}" for command in commands]
    lines.append("")
    lines += [f"{keys.ljust(22)}{what}" for keys, what in KEYS_HELP]
    return "\n".join(lines)


async def compact(host: CommandHost, args: str) -> None:
    session = host.session
    if not hasattr(session, "compact"):
        host.show(ev.Notice("compaction is not available in this build yet", title="compact"))
        return
    await host.render_events(session.compact(args or None))


async def new(host: CommandHost, args: str) -> None:
    host.new_session()


async def quit_(host: CommandHost, args: str) -> None:
    host.quit()


async def status(host: CommandHost, args: str) -> None:
    host.show(ev.Notice(status_text(host.session), title="status"))


def status_text(session: Session) -> str:
    config = session.config
    count = session.token_count_event()
    total = count.total
    cached = f" ({100 * total.cached_input_tokens // total.input_tokens}% cached)" if total.input_tokens else ""
    rows = [
        ("model", session.model),
        ("provider", config.provider.id),
        ("directory", home_relative(config.cwd)),
        ("mode", session.mode),
        ("approval", config.approval_policy),
        ("sandbox", config.sandbox_mode),
        ("context", f"{count.percent_left}% left ({tokens(count.context_used)} / {tokens(count.context_window)})"),
        ("tokens", f"{tokens(total.input_tokens)} in{cached}, {tokens(total.output_tokens)} out"),
        ("session", session.id),
    ]
    return "\n".join(f"{name.ljust(10)}{value}" for name, value in rows)
