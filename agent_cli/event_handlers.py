"""One small handler per event type, instead of one function matching them all.

A renderer (exec's text and JSON lines, the TUI's transcript) keeps a :class:`ByEventType` and
registers a method per event it shows; ``render`` looks the event's type up. An event type a
renderer does not register is not shown by it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

from agent_cli.events import Event

H = TypeVar("H", bound=Callable[..., Any])


class ByEventType(Generic[H]):
    def __init__(self) -> None:
        self._handlers: dict[type, H] = {}

    def __call__(self, *types: type[Event]) -> Callable[[H], H]:
        """Register the decorated function as the handler of ``types``."""

        def register(handler: H) -> H:
            for kind in types:
                self._handlers[kind] = handler
            return handler

        return register

    def get(self, event: Event) -> H | None:
        """The handler of ``event``'s type (or of the nearest class it derives from)."""
        for kind in type(event).__mro__:
            if (handler := self._handlers.get(kind)) is not None:
                return handler
        return None
