"""The summary table of a batch: at the end of a run, and from DIR alone (`agent batch report DIR`)."""

from __future__ import annotations

from typing import Any

from agent_cli.batch.results import SUCCEEDED

COLUMNS = ("ID", "STATUS", "EXIT", "REWARD", "TOKENS", "COST", "TIME", "TRIES", "BRANCH")


def cells(record: dict[str, Any]) -> tuple[str, ...]:
    usage = record.get("usage") or {}
    tokens = int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))
    cost = usage.get("cost_usd")
    reward = record.get("reward")
    return (
        str(record.get("id", "?")),
        str(record.get("status", "?")),
        "" if record.get("exit_code") is None else str(record["exit_code"]),
        "" if reward is None else f"{reward:g}",
        str(tokens) if usage else "",
        "" if cost is None else f"${cost:.4f}",
        f"{float(record.get('duration_s') or 0):.1f}s",
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
    rewards = [float(record["reward"]) for record in records if record.get("reward") is not None]
    if rewards:
        parts.append(f"mean reward {sum(rewards) / len(rewards):.3g} over {len(rewards)}")
    usages = [record.get("usage") or {} for record in records]
    tokens = sum(int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0)) for usage in usages)
    parts.append(f"{tokens} tokens")
    costs = [usage["cost_usd"] for usage in usages if "cost_usd" in usage]
    if costs:
        parts.append(f"${sum(costs):.4f}")
    return f"{len(records)} task{'s' if len(records) != 1 else ''}: " + ", ".join(parts)
