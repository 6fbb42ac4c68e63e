"""The ``[worktree]`` config table: what a new worktree is set up with.

```toml
[worktree]
copy = [".env", "config/*.local.json"]   # ignored files copied from the checkout it was made from
setup = "npm ci"                          # run in the new worktree as a `!command` (sandbox, approvals)
```
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

KEYS = ("copy", "setup")


@dataclass(frozen=True, slots=True)
class WorktreeSettings:
    copy: tuple[str, ...] = ()
    setup: str | None = None

    @classmethod
    def from_raw(cls, raw: dict[str, Any]) -> WorktreeSettings:
        """From a config's merged tables (``config.raw``), already checked."""
        table = raw.get("worktree") or {}
        setup = table.get("setup")
        return cls(tuple(table.get("copy", ())), setup.strip() if isinstance(setup, str) and setup.strip() else None)


def check_worktree_table(table: Any, origin: str) -> None:
    """Config check of ``[worktree]``; ValueError saying what is wrong."""
    if not isinstance(table, dict):
        raise ValueError("`worktree` must be a table")
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        raise ValueError(f"`worktree` has unknown keys {', '.join(unknown)} (known: {', '.join(KEYS)})")
    copy = table.get("copy", [])
    if not isinstance(copy, list) or not all(isinstance(entry, str) and entry.strip() for entry in copy):
        raise ValueError("`worktree.copy` must be an array of file names or glob patterns")
    if "setup" in table and not isinstance(table["setup"], str):
        raise ValueError("`worktree.setup` must be a command line (a string)")
