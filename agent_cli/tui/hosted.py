"""What the app uses of a session that runs in a host (``agent --remote``, ``agent attach``):
the operations and events every conversation has (``commands.conversation.Driven``), and what
only a hosted one has: the thread it is, its history as events, the turns other clients start,
the host going away, and leaving it running. A Protocol, so the local app never loads the
protocol's client (remote/conversation.py is the one that meets it)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Protocol

from agent_cli import events as ev
from agent_cli.commands.conversation import Driven


class HostedThread(Protocol):
    @property
    def id(self) -> str: ...
    @property
    def cwd(self) -> Path: ...
    @property
    def name(self) -> str | None: ...
    @property
    def preview(self) -> str: ...


class Hosted(Driven, Protocol):
    @property
    def thread(self) -> HostedThread: ...

    url: str  # where the host was reached ("": the per-user host)

    @property
    def on_gone(self) -> Callable[[str], None] | None:
        """Called when the host closes the connection, or the session."""
        ...

    @on_gone.setter
    def on_gone(self, callback: Callable[[str], None] | None) -> None: ...

    def history_events(self) -> list[ev.Event]:
        """The conversation so far, as events to show."""
        ...

    def follow_elsewhere(self, follow: Callable[[AsyncIterator[ev.Event]], None]) -> None:
        """``follow`` gets each turn this client did not start, as its events."""

    async def aclose(self) -> None:
        """Leave; the session goes on in the host."""


def detached_note(hosted: Hosted) -> str:
    """What is printed when the app leaves a session running in a host."""
    remote = f" --remote {hosted.url}" if hosted.url else ""
    return f"session {hosted.thread.id} goes on in the host\nback to it with: agent attach{remote} {hosted.thread.id}"
