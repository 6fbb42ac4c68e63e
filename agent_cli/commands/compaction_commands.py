"""``/compact [focus | show]`` and ``/autocompact [PERCENT | TOKENS | on | off]``."""

from __future__ import annotations

import re

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.context.compact import real_user_messages
from agent_cli.context.dropped import render_dropped
from agent_cli.context.fragments import summary_prefix
from agent_cli.operations import Compact
from agent_cli.session.session import Emit, Session

AUTOCOMPACT_USAGE = (
    "/autocompact [PERCENT | TOKENS | on | off], e.g. /autocompact 70%, /autocompact 12000, /autocompact 12k"
)
MIN_COMPACT_GAIN = 500  # tokens a compaction must be able to replace: a summary is about that long
_AMOUNT = re.compile(r"(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>%|k)?", re.IGNORECASE)


def compact_form(args: str) -> Compact | None:
    """``/compact [focus]`` as an operation (``/compact show`` only reports: no operation)."""
    return None if args.strip().lower() == "show" else Compact(args or None)


async def compact_command(inv: Invocation) -> None:
    if (op := compact_form(inv.args)) is None:
        show_last_compaction(inv)
        return
    await compact(inv.session, op, inv.emit)


async def compact(session: Session, op: Compact, emit: Emit) -> None:
    """Summarize the conversation now, unless it is too short for a summary to make it smaller."""
    if (short := too_short_to_compact(session)) is not None:
        emit(ev.Notice(short, title="compact"))
        return
    await session.compact_now(emit, op.focus or None)


def too_short_to_compact(session: Session) -> str | None:
    """Why ``/compact`` would not make the context smaller, before a summary is paid for: a
    compaction keeps the initial context and your own messages, and replaces the rest (answers,
    tool calls and outputs) with a summary that is about this long itself."""
    items = session.history.items
    if not items:
        return None  # "nothing to compact yet", as the compaction says it
    kept = real_user_messages(items, summary_prefix(session.config.agent_home))
    replaced = session.history.estimated_tokens - session.initial_tokens - sum(map(session.tokens.item_tokens, kept))
    if replaced >= MIN_COMPACT_GAIN:
        return None
    return (
        f"not compacted: the conversation is short. A compaction keeps the initial context and your "
        f"messages and replaces the rest, here about {max(0, replaced):,} tokens, with a summary about as "
        f"long, so the context would not get smaller. It pays off past {MIN_COMPACT_GAIN:,} tokens of answers "
        f"and tool output."
    )


def show_last_compaction(inv: Invocation) -> None:
    last = inv.session.compaction.last
    if last is None:
        inv.emit(ev.Notice("No compaction yet in this session.", title="compaction"))
        return
    inv.emit(ev.Notice(render_dropped(last.summary, last.dropped), title=f"last compaction ({last.trigger})"))


async def autocompact_command(inv: Invocation) -> None:
    session = inv.session
    arg = inv.args.strip().lower()
    if arg in ("off", "false", "no"):
        session.set_auto_compact(enabled=False)
    elif arg in ("on", "true", "yes"):
        session.set_auto_compact(enabled=True)
    elif arg:
        match = _AMOUNT.fullmatch(arg)
        if match is None:
            raise InputError(f"cannot read {inv.args!r}; use {AUTOCOMPACT_USAGE}")
        number, unit = float(match["number"]), (match["unit"] or "").lower()
        if unit == "%" or (not unit and number <= 100):
            if not 1 <= number <= 100:
                raise InputError(f"a percentage must be between 1 and 100; got {inv.args}")
            session.set_auto_compact(enabled=True, percent=int(number))
        else:
            tokens = int(number * 1000) if unit == "k" else int(number)
            if tokens > session.effective_window:
                raise InputError(f"{tokens:,} tokens is more than the usable window ({session.effective_window:,})")
            session.set_auto_compact(enabled=True, tokens=tokens)
    inv.emit(ev.Notice(describe_threshold(inv), title="autocompact"))
    inv.emit(session.token_count_event())  # the status bar shows the new threshold at once


def describe_threshold(inv: Invocation) -> str:
    session = inv.session
    limit, window, used = session.auto_compact_limit, session.effective_window, session.context_tokens()
    if limit is None:
        return (
            f"Auto-compaction is off for this session (context: {used:,} of {window:,} tokens usable). "
            "An overflow is still recovered. /autocompact on turns it back on."
        )
    return (
        f"Auto-compaction at {limit:,} tokens ({100 * limit // max(1, window)}% of the {window:,} usable); "
        f"context now {used:,}. Change it for this session with {AUTOCOMPACT_USAGE}."
    )
