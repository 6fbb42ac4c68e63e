"""The summary table of a batch: at the end of a run, and from DIR alone (`agent batch report DIR`)."""

from __future__ import annotations

from typing import Any

from agent_cli.batch.results import SUCCEEDED

COLUMNS = ("ID", "STATUS", "EXIT", "REWARD", "TOKENS", "COST", "TIME", "TRIES", "BRANCH")


def number(value: Any) -> float | None:
    """A figure of a results line, or None: a line written by hand (or by a hostile DIR) may hold anything."""
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else None


def usage_of(record: dict[str, Any]) -> dict[str, Any]:
    usage = record.get("usage")
    return usage if isinstance(usage, dict) else {}


def tokens_of(usage: dict[str, Any]) -> int:
    return int(sum(number(usage.get(key)) or 0 for key in ("input_tokens", "output_tokens")))


def cells(record: dict[str, Any]) -> tuple[str, ...]:
    usage = usage_of(record)
    cost, reward = number(usage.get("cost_usd")), number(record.get("reward"))
    return (
        str(record.get("id", "?")),
        str(record.get("status", "?")),
        "" if record.get("exit_code") is None else str(record["exit_code"]),
        "" if reward is None else f"{reward:g}",
        str(tokens_of(usage)) if usage else "",
        "" if cost is None else f"${cost:.4f}",
        f"{number(record.get('duration_s')) or 0:.1f}s",
        str(record.get("attempts", 1)),
        str(record.get("branch") or ""),
    )


def table(records: list[dict[str, Any]]) -> str:
    rows = [COLUMNS, *(cells(record) for record in records)]
    widths = [max(len(row[column]) for row in rows) for column in range(len(COLUMNS))]
    lines = ["  ".join(text.ljust(width) for text, width in zip(row, widths)).rstrip() for row in rows]
    return "\n".join([*lines, totals(records)]) + "\n"


def totals(records: list[dict[str, Any]]) -> str:
    counts: dict[str, int] = {}
    for record in records:
        counts[str(record.get("status"))] = counts.get(str(record.get("status")), 0) + 1
    parts = [f"{counts.pop(SUCCEEDED, 0)} succeeded", *(f"{n} {status}" for status, n in sorted(counts.items()))]
    rewards = [reward for record in records if (reward := number(record.get("reward"))) is not None]
    if rewards:
        parts.append(f"mean reward {sum(rewards) / len(rewards):.3g} over {len(rewards)}")
    usages = [usage_of(record) for record in records]
    tokens = sum(tokens_of(usage) for usage in usages)
    parts.append(f"{tokens} tokens")
    costs = [cost for usage in usages if (cost := number(usage.get("cost_usd"))) is not None]
    if costs:
        parts.append(f"${sum(costs):.4f}")
    return f"{len(records)} task{'s' if len(records) != 1 else ''}: " + ", ".join(parts)
