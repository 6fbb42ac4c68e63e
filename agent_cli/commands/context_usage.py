"""``/context``: what the next request carries, part by part, counted with the session's tokenizer."""

from __future__ import annotations

from dataclasses import replace

from agent_cli import events as ev
from agent_cli.context.fragments import (
    AGENTS_MD,
    ENVIRONMENT_CONTEXT,
    MEMORIES,
    PROJECT_CHECKS,
    SKILL_BODY,
    SKILLS_LIST,
)
from agent_cli.context.tokens import images_tokens
from agent_cli.items import Item, Message, ToolOutput
from agent_cli.lsp.diagnostics import END as DIAGNOSTICS_END
from agent_cli.lsp.diagnostics import START as DIAGNOSTICS_START
from agent_cli.mcp.toolset import spec_tokens
from agent_cli.session.session import Session
from agent_cli.tools.mcp_names import is_mcp_name

PARTS = (
    "system prompt",
    "tool schemas",
    "AGENTS.md",
    "skills",
    "environment",
    "memories",
    "conversation",
    "tool outputs",
)
BAR_WIDTH = 24


def part_of(item: Item) -> str:
    if isinstance(item, ToolOutput):
        return "tool outputs"
    if isinstance(item, Message):
        if item.role == "developer":
            return "system prompt"  # permissions, mode and model changes: instructions, not talk
        if item.role == "user":
            if AGENTS_MD.matches(item.text):
                return "AGENTS.md"
            if SKILLS_LIST.matches(item.text) or SKILL_BODY.matches(item.text):
                return "skills"
            if ENVIRONMENT_CONTEXT.matches(item.text):
                return "environment"
            if MEMORIES.matches(item.text):
                return "memories"
    return "conversation"


def diagnostics_tokens(item: Item, count) -> int:
    """What the ``<diagnostics>`` block of an edit's output, or a ``<project_checks>`` note, takes."""
    if isinstance(item, ToolOutput) and DIAGNOSTICS_START in item.output:
        start = item.output.find(DIAGNOSTICS_START)
        end = item.output.find(DIAGNOSTICS_END, start)
        return count(item.output[start : end + len(DIAGNOSTICS_END)] if end >= 0 else item.output[start:])
    if isinstance(item, Message) and item.role == "user" and PROJECT_CHECKS.matches(item.text):
        return count(item.text)
    return 0


def context_usage(session: Session) -> ev.ContextUsage:
    counter = session.tokens
    mcp_part = ("MCP tools",) if session.mcp is not None else ()  # only when MCP servers are configured
    totals = dict.fromkeys(PARTS[:2] + mcp_part + PARTS[2:], 0)
    instructions = session.instructions
    totals["system prompt"] = counter.text_tokens(instructions)
    specs = session.tool_specs()
    if session.mcp is not None:  # before the first turn: the MCP tools that turn will add
        specs = [*specs, *session.mcp.pending_specs(counter.text_tokens)]
    totals["tool schemas"] = counter.prompt_overhead(instructions, specs) - totals["system prompt"]
    if session.mcp is not None:  # shown apart: what the MCP servers' tools cost (mcp_search + mcp_call in search mode)
        totals["MCP tools"] = spec_tokens(counter.text_tokens, [spec for spec in specs if is_mcp_name(spec.name)])
        totals["tool schemas"] -= totals["MCP tools"]
    items = session.history.items
    if session.initial is None:  # the first request will carry the initial context too
        items = session.build_initial_context().items + items
    image_tokens = 0  # a row of their own, shown only when the conversation holds images
    diagnostics = 0  # language servers' reports and failing checks: a row of their own when there are any
    for item in items:
        in_images = images_tokens(item, counter.image_formula, counter.vision)
        part, tokens = part_of(item), counter.item_tokens(item) - in_images
        if (found := diagnostics_tokens(item, counter.text_tokens)) and part in totals:
            diagnostics += min(found, tokens)
            tokens -= min(found, tokens)
        totals[part] += tokens
        image_tokens += in_images
    if diagnostics:
        totals["diagnostics"] = diagnostics
    parts = [ev.ContextPart(name, counter.calibrated(tokens)) for name, tokens in totals.items()]
    if image_tokens:  # counted by the provider's own formula, so not calibrated
        parts.append(ev.ContextPart("images", image_tokens))
    return ev.ContextUsage(
        tuple(parts),
        sum(part.tokens for part in parts),
        session.effective_window,
        counter.counting_method,
        counter.accuracy,
    )


def token_count(session: Session) -> ev.TokenCount:
    """The session's count; before the first request reports usage, what that request will
    carry (the initial context, the MCP tools of the servers ready now) as ``/context`` counts it."""
    count = session.token_count_event()
    if session.last_usage is None:
        count = replace(count, context_used=context_usage(session).used)
    return count


def memory_tokens(session: Session) -> int:
    """Tokens the recalled ``<memories>`` fragments take in the current context (calibrated, as ``/context`` shows them)."""
    tokens = sum(session.tokens.item_tokens(item) for item in session.history.items if part_of(item) == "memories")
    return session.tokens.calibrated(tokens)


def format_context_table(usage: ev.ContextUsage) -> str:
    """A plain-text table with a bar per part, for ``agent exec``."""
    rows = [(part.name, part.tokens) for part in usage.parts]
    free = max(0, usage.window - usage.used)
    width = max(len(name) for name, _ in rows + [("free", 0)]) + 2
    filled = round(BAR_WIDTH * 2 * min(usage.percent(usage.used), 100) / 100)
    lines = [
        f"[{'█' * filled}{'░' * (BAR_WIDTH * 2 - filled)}] {usage.percent(usage.used):.1f}% of the window used",
        "",
    ]
    lines.append(f"{'part'.ljust(width)}{'tokens':>10}{'% window':>10}")
    for name, tokens in [*rows, ("total", usage.used), ("free", free)]:
        percent = usage.percent(tokens)
        bar = "█" * round(BAR_WIDTH * min(percent, 100) / 100) if name not in ("total", "free") else ""
        lines.append(f"{name.ljust(width)}{tokens:>10,}{percent:>8.1f}%  {bar}".rstrip())
    lines.append(
        f"window: {usage.window:,} tokens (95% of the model's); counted with {usage.counting_method}, {usage.accuracy}"
    )
    return "\n".join(lines)
