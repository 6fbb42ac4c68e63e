"""What the session remembers about its compactions, and the auto-compaction threshold in force."""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli import events as ev


@dataclass
class CompactionState:
    """What the session remembers about its compactions."""

    count: int = 0
    history_len_after: int | None = None  # len(history) right after the last compaction
    tokens_after: int = 0  # estimated context right after it
    last_step: tuple[int, int] | None = None  # history items added between the last two requests
    last: ev.CompactionFinished | None = None  # the last applied compaction: its summary and what it dropped
    setting: AutoCompactSetting | None = None  # /autocompact's threshold; None: the config's


@dataclass(frozen=True, slots=True)
class AutoCompactSetting:
    """When auto-compaction starts, as the config keys say it (context/tokens.py's auto_compact_limit)."""

    enabled: bool
    percent: int
    token_limit: int | None
