"""What a command handler gets, and how a command reaches the model.

A command that needs the model (a review, ``/init``, a command file) runs an ordinary session
turn through :func:`run_model_turn`, optionally with fewer tools or another model for that turn
only.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from agent_cli import events as ev
from agent_cli.commands.catalog import CommandCatalog
from agent_cli.commands.front_end import FrontEnd
from agent_cli.items import Image
from agent_cli.session.session import Emit, Session

# Given the last assistant message, return the event that ends the turn (TurnComplete or
# TurnFailed); may emit notices first.
OnComplete = Callable[[str | None], Awaitable[ev.Event]]


@dataclass(frozen=True)
class Invocation:
    session: Session
    emit: Emit
    name: str  # the command as typed, without the slash
    args: str  # everything after the name, stripped
    typed: str  # the whole input line
    table: CommandCatalog
    front_end: FrontEnd | None = None  # what it may ask of the front end beyond events (the TUI)


def attachment_budget(session: Session) -> int:
    """Bytes per attached file: about one tool output's token budget (smaller in a small window)."""
    return max(1024, session.tool_output_limit * 4)


def file_settings(session: Session) -> dict[str, Any]:
    """The file processors' thresholds and document cache, and what Read deny rules hide, for ``expand``."""
    permissions = session.approvals.permissions
    return {
        "limits": session.config.read_file,
        "cache_dir": session.config.agent_home / "cache",
        "hidden": permissions.read_denied if permissions.hides_any() else None,
    }


def read_only_tool_names(session: Session) -> list[str]:
    return [name for name in session.tools.names if session.tools.is_read_only(name)]


@contextmanager
def switched_model(session: Session, model: str | None) -> Iterator[None]:
    """Use ``model`` for the block only (a command file's ``model:``)."""
    previous = session.model
    if not model or model == previous:
        yield
        return
    session.switch_model(model)
    try:
        yield
    finally:
        session.switch_model(previous)


async def run_model_turn(
    session: Session,
    text: str,
    emit: Emit,
    *,
    typed: str | None = None,
    only_tools: Iterable[str] | None = None,
    model: str | None = None,
    on_complete: OnComplete | None = None,
    images: tuple[Image, ...] = (),
    recall: str | None = None,
) -> None:
    """One session turn for ``text``; ``on_complete`` sees the answer before the turn ends.
    A command passes its arguments as ``recall``: memory recall searches with the words the user
    typed, never with the prompt the command adds nor its name (``/init`` would find "git init")."""
    held: list[ev.TurnComplete] = []

    def relay(event: ev.Event) -> None:
        if on_complete is not None and isinstance(event, ev.TurnComplete):
            held.append(event)
        else:
            emit(event)

    with switched_model(session, model):
        await session.turn(text, relay, typed, images, recall, only_tools)
    if held:
        emit(await on_complete(held[0].last_message))  # type: ignore[misc]
