"""What a repository's own ``.agent/config.toml`` may set before the folder is trusted.

Only what makes the agent more careful: an allow-list of keys with the values that tighten
(``sandbox_mode = "read-only"``, ``checkpoints = true``...). Every other key, a new one too, waits
for trust and is listed in the trust question (agent_cli/trust/). The repository's permission
rules, hooks and MCP servers are judged on their own: deny and ask rules apply at once, allow
rules, hooks and servers wait (permissions/engine.py, trust/gate.py); so are its domains.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

# Key -> whether the value only makes the agent more careful.
TIGHTENING: dict[str, Callable[[Any], bool]] = {
    "sandbox_mode": lambda value: value == "read-only",
    "approval_policy": lambda value: value == "untrusted",
    "network_access": lambda value: value is False,
    "web_fetch_allow_private": lambda value: value is False,
    "checkpoints": lambda value: value is True,
    "web_search": lambda value: value in ("off", "disabled"),
    "memory": lambda value: value is False,
}
# Judged elsewhere, rule by rule, hook by hook and server by server ([sandbox.network]: domain by
# domain, network/lists.py: denied ones at once, allowed ones once trusted, hosts never).
JUDGED_ELSEWHERE = frozenset({"permissions", "hooks", "mcp_servers", "sandbox"})


def waits_for_trust(key: str, value: Any) -> bool:
    """Whether a repository's setting applies only once its folder is trusted."""
    if key in JUDGED_ELSEWHERE:
        return False
    tightens = TIGHTENING.get(key)
    return tightens is None or not tightens(value)


def waiting(table: dict[str, Any]) -> dict[str, Any]:
    """The settings of a repository's table that wait for trust."""
    return {key: value for key, value in table.items() if waits_for_trust(key, value)}
