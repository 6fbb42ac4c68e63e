"""The session's hooks (config ``[[hooks.<Event>]]`` and plugins') and what they still have to do."""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine, Iterable
from dataclasses import dataclass, field
from typing import Any

from agent_cli.config import Config
from agent_cli.hooks.spec import HookSpec, HookTable, parse_hooks


@dataclass
class HookState:
    """The session's hooks and what they still have to do."""

    table: HookTable = field(default_factory=dict)
    pending_start: str | None = "startup"  # SessionStart source to run before the next prompt
    queued_context: list[str] = field(default_factory=list)  # fragments waiting for a safe point
    stop_blocks: int = 0  # consecutive Stop blocks in the current turn
    end_reason: str = "other"  # SessionEnd's reason when the session closes (the front end sets it)
    ended: bool = False  # SessionEnd ran
    background: set[asyncio.Task] = field(default_factory=set)  # Notification, async hooks and notify still running

    def register(self, specs: Iterable[HookSpec]) -> None:
        """Hooks that join for the rest of the session (a host's), after those it has."""
        for spec in specs:
            self.table[spec.event] = (*self.table.get(spec.event, ()), spec)

    def keep(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` beside the session; SessionEnd waits for it, so it never outlives it."""
        task = asyncio.ensure_future(work)
        self.background.add(task)
        task.add_done_callback(self.background.discard)

    @classmethod
    def from_config(cls, config: Config, plugin_hooks: Iterable[HookSpec] = (), raw: dict | None = None) -> HookState:
        """The config's hooks (``raw``: the tables an untrusted folder may use), then the plugins'."""
        state = cls(parse_hooks((config.raw if raw is None else raw).get("hooks"), "config"))
        state.register(plugin_hooks)
        return state
