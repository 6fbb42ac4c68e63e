"""Whether a session may run the repository's own code, and the configuration it uses meanwhile.

Until the folder is trusted, a session runs none of: ``.mcp.json`` servers, the ``hooks`` and
``mcp_servers`` of the project's ``.agent/config.toml``, the hooks of ``.claude/settings.json``,
the plugins of ``.agent/plugins/``; and the repository's allow rules do not apply. User-level
configuration (``~/.agent``, ``~/.claude``) and ``-c`` are trusted as always.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any

from agent_cli.config import Config, merge_tables, without_repository_settings
from agent_cli.trust.inventory import Inventory, take_inventory
from agent_cli.trust.store import TrustStore

GATED_KEYS = ("hooks", "mcp_servers")


@dataclass(frozen=True, slots=True)
class TrustState:
    inventory: Inventory
    answer: bool | None  # what the user answered for this content; None: never asked
    forced: bool = False  # --trust

    @property
    def trusted(self) -> bool:
        return not self.inventory.items or self.forced or self.answer is True

    @property
    def needs_question(self) -> bool:
        return bool(self.inventory.items) and not self.forced and self.answer is None

    def skipped_line(self) -> str | None:
        """The one warning line that names what did not run."""
        if self.trusted:
            return None
        names = ", ".join(f"{item.kind} {item.name}" for item in self.inventory.items)
        return (
            f"this folder is not trusted: its own {names} did not run or apply "
            f"(trust it in the TUI, or pass --trust to agent exec)"
        )


def trust_state(config: Config) -> TrustState:
    inventory = take_inventory(config)
    answer = TrustStore(config.agent_home).answer(inventory.folder, inventory.digest) if inventory.items else True
    return TrustState(inventory, answer, forced=config.trust_repository)


def record_answer(config: Config, trusted: bool) -> TrustState:
    inventory = take_inventory(config)
    if inventory.items:
        TrustStore(config.agent_home).record(inventory.folder, inventory.digest, trusted)
    return TrustState(inventory, trusted if inventory.items else True, forced=config.trust_repository)


def untrusted_raw(config: Config) -> dict[str, Any]:
    """``config.raw`` with the project layer's hooks and MCP servers left out."""
    raw = {key: value for key, value in config.raw.items() if key not in GATED_KEYS}
    for layer in config.layers:
        if layer.kind == "project":
            continue
        for key in GATED_KEYS:
            if isinstance(layer.table.get(key), dict):
                merge_tables(raw.setdefault(key, {}), copy.deepcopy(layer.table[key]))
    return raw


def config_in_force(config: Config) -> Config:
    """``config`` as a session uses it: without the repository's own settings until it is trusted."""
    return config if trust_state(config).trusted else without_repository_settings(config)


def provider_in_force(config: Config):
    """The provider a session on ``config`` talks to: the repository's choice only once trusted
    (a front end checks its API key before the session starts)."""
    return config_in_force(config).provider
