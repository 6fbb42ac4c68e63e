"""The session's hooks (config ``[[hooks.<Event>]]`` and plugins') and what they still have to do."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_cli.config import Config
from agent_cli.hooks.spec import HookSpec, HookTable, parse_hooks


@dataclass
class HookState:
    """The session's hooks and what they still have to do."""

    table: HookTable = field(default_factory=dict)
    pending_start: str | None = "startup"  # SessionStart source to run before the next prompt
    queued_context: list[str] = field(default_factory=list)  # fragments waiting for a safe point
    stop_blocks: int = 0  # consecutive Stop blocks in the current turn

    @classmethod
    def from_config(cls, config: Config, plugin_hooks: Iterable[HookSpec] = (), raw: dict | None = None) -> HookState:
        """The config's hooks (``raw``: the tables an untrusted folder may use), then the plugins'."""
        table = parse_hooks((config.raw if raw is None else raw).get("hooks"), "config")
        for spec in plugin_hooks:
            table[spec.event] = (*table.get(spec.event, ()), spec)
        return cls(table)
