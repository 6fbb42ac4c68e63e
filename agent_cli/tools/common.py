"""Small helpers the tools share: the output budget and how paths are shown to the model."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.context.truncate import TruncationPolicy
from agent_cli.tools.base import ToolContext, ToolError


def output_policy(ctx: ToolContext) -> TruncationPolicy:
    """The budget for one tool output in the model's context."""
    return TruncationPolicy("tokens", max(0, ctx.output_token_limit))


def display_path(ctx: ToolContext, path: Path) -> str:
    """``path`` relative to the session's cwd when it is inside it, else absolute."""
    cwd = ctx.cwd.resolve()
    try:
        rel = path.relative_to(cwd)
    except ValueError:
        return str(path)
    return "." if str(rel) == "." else rel.as_posix()


def relative_arg(ctx: ToolContext, path: Path) -> str | None:
    """How to name ``path`` to a process run in the cwd: relative inside it, None for the cwd."""
    shown = display_path(ctx, path)
    return None if shown == "." else shown


def int_arg(
    args: dict[str, Any],
    name: str,
    default: int,
    *,
    minimum: int = 1,
    maximum: int | None = None,
    notes: list[str] | None = None,
) -> int:
    """An integer argument. Above ``maximum`` it is clamped (a model asking for depth 10^15 gets
    the maximum, not ten minutes of CPU) and ``notes`` gets a line saying so for the output."""
    value = args.get(name)
    if value is None:
        return default
    if not isinstance(value, int) or isinstance(value, bool) or value < minimum:
        raise ToolError(f"{name} must be an integer >= {minimum}, got {_short(value)}")
    if maximum is not None and value > maximum:
        if notes is not None:
            notes.append(f"[{name} {_short(value)} is more than the maximum; used {maximum:,}]")
        return maximum
    return value


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def str_arg(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise ToolError(f"{name} must be a non-empty string")
    return value
