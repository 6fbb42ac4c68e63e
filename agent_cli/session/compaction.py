"""Compaction: summarize the conversation and rebuild a smaller history that keeps the task.

Triggers: ``auto`` (before a request that would cross the threshold, also between tool calls),
``manual`` (``Session.compact``, ``/compact [focus]``) and ``overflow`` (the provider rejected a
request as too long; the turn compacts and retries once).

The summarizing request continues the conversation: same system prompt, same tools, the same
items, plus one user message with ``prompts/compact.md``. Its prefix is the previous request's,
so the provider's prompt cache is reused. The history is replaced only at the very end, in one
step, so an interrupt or a failure leaves the old history intact.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from agent_cli import events as ev
from agent_cli.context.compact import (
    fallback_summary,
    protected_prefix_length,
    rebuild_history,
    transcript,
    trim_oldest,
    user_message_budget,
)
from agent_cli.context.dropped import dropped_items
from agent_cli.context.fragments import summary_prefix
from agent_cli.context.initial import InitialContext
from agent_cli.context.prompts import PromptError, PromptLibrary, prompt_library
from agent_cli.items import Item, Message, user
from agent_cli.models import base as stream
from agent_cli.models.base import ModelClient, Prompt
from agent_cli.models.errors import ContextWindowExceeded, ModelError
from agent_cli.paths import bundled_prompts_dir
from agent_cli.session.compaction_plan import shorten_newest_outputs, step_too_large_for_room, summarizer_budget
from agent_cli.session.hooks import run_pre_compact, run_session_start
from agent_cli.session.memory_recall import recall_after_compaction, without_memories
from agent_cli.session.meter import ContextMeter
from agent_cli.session.request_parts import RequestParts
from agent_cli.session.services import SessionServices
from agent_cli.session.session_state import SessionState, fresh_initial_context
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext
from agent_cli.store.rollout import RecordingHistory

Trigger = Literal["manual", "auto", "overflow"]
MAX_TRIM_ROUNDS = 8  # summarizing requests sent while trimming an overflow, before falling back
# On overflow, aim below both our idea of the window and what was just refused: the configured
# window may be wrong, and estimates may undercount. A further overflow cuts deeper.
FIRST_TRIM, LATER_TRIM = 0.9, 0.7
ACCURACY_WARNING = (
    "This conversation has now been compacted {count} times. Long sessions and repeated "
    "compaction can make the model less accurate; consider starting a new session for a new task."
)


@dataclass(frozen=True, slots=True)
class Summary:
    text: str
    trimmed: int = 0
    fallback: bool = False


# --- when ---------------------------------------------------------------------------------------


def should_auto_compact(turn: TurnContext, state: SessionState, parts: RequestParts) -> bool:
    """True when the request with ``parts`` would cross the threshold and compacting can help.

    Not right after a compaction: only once new items have been added, and only if the last
    compaction got below the threshold (otherwise it would repeat on every request; an actual
    overflow is still recovered by the turn).
    """
    meter = state.meter
    limit = meter.auto_compact_limit
    if limit is None or len(state.history) == 0:
        return False
    prompt_tokens = compaction_prompt_tokens(turn, meter)
    if meter.context_tokens(parts) < limit and not step_too_large_for_room(state, parts, prompt_tokens):
        return False
    compaction = state.compaction
    if compaction.history_len_after is None:
        return True
    return len(state.history) > compaction.history_len_after and compaction.tokens_after < limit


def compaction_prompt_tokens(turn: TurnContext, meter: ContextMeter) -> int:
    return meter.tokens.item_tokens(user(compaction_prompt(turn.config.agent_home, None)))


async def auto_compact_if_needed(
    turn: TurnContext, state: SessionState, services: SessionServices, parts: RequestParts, emit: Emit
) -> RequestParts:
    """Compact before the request with ``parts`` when it is time; the request's parts after it
    (a compaction builds the system prompt again)."""
    await state.meter.count_exactly_near(state.meter.auto_compact_limit, parts)  # the decision below is then exact
    if not should_auto_compact(turn, state, parts):
        return parts
    await compact(turn, state, services, emit, "auto")
    return state.request_parts(turn)


# --- how ----------------------------------------------------------------------------------------


async def compact(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    emit: Emit,
    trigger: Trigger,
    focus: str | None = None,
) -> ev.CompactionFinished | None:
    """Summarize and rebuild the history. Returns the finished event (None if there was nothing)."""
    history, meter, compaction = state.history, state.meter, state.compaction
    if not transcript(history.items).strip():
        emit(ev.Notice("Nothing to compact yet."))
        return None
    await meter.count_exactly()  # trimming and the before/after comparison need exact counts
    parts = state.request_parts(turn)  # the summarizing request continues the last one: same prefix
    items_before = len(history)
    tokens_before = meter.context_tokens(parts)
    emit(ev.CompactionStarted(trigger))
    await run_pre_compact(
        turn, state, services, trigger, emit, focus or ""
    )  # its context is recorded after the rebuild
    summary = await summarize(turn, state, services, parts, emit, focus)

    old_items = history.items
    initial = fresh_initial(turn, state, services, emit)
    prefix = summary_prefix(turn.config.agent_home)
    rebuilt = rebuild_history(
        initial.items if initial is not None else previous_initial_items(state),
        old_items,
        summary.text,
        budget=recent_messages_budget(state, parts),
        count=meter.tokens.text_tokens,
        summary_prefix=prefix,
    )
    old_tokens = history.estimated_tokens
    new_tokens = meter.tokens.items_tokens(rebuilt.items)
    applied = new_tokens < old_tokens
    dropped = dropped_items(old_items, rebuilt.items, meter.tokens.item_tokens, prefix) if applied else []
    if applied:
        state.replace_history(rebuilt.items, initial)  # the model now has the environment in full
        compaction.count += 1
        await run_session_start(turn, state, services, "compact", emit)  # hooks: SessionStart, source "compact"
        recall_after_compaction(turn.config, history, services.memory, emit)
        parts = state.request_parts(turn)  # the system prompt was built again
    # Remembered even when nothing changed, so the next request does not try again at once.
    compaction.history_len_after = len(history)
    compaction.tokens_after = meter.context_tokens(parts)
    if not applied:
        emit(
            ev.Warning(
                f"Compaction would not make the context smaller ({old_tokens:,} → {new_tokens:,} tokens of "
                "conversation), so the previous history was kept."
            )
        )
    finished = ev.CompactionFinished(
        trigger,
        tokens_before=tokens_before,
        tokens_after=meter.context_tokens(parts),
        items_before=items_before,
        items_after=len(history),
        trimmed=summary.trimmed,
        summary=summary.text,
        applied=applied,
        fallback=summary.fallback,
        dropped=tuple(dropped),
    )
    if applied:
        compaction.last = finished  # for `/compact show`
    # A resume must not retry a useless compaction, and `/compact show` works after it too.
    services.learned.compaction_finished(compaction, finished if applied else None)
    emit(finished)
    emit(meter.token_count_event(parts))
    if applied and compaction.count >= 2:
        emit(ev.Warning(ACCURACY_WARNING.format(count=compaction.count)))
    return finished


async def summarize(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    parts: RequestParts,
    emit: Emit,
    focus: str | None,
) -> Summary:
    """Ask the model for a hand-off summary; trim on overflow; fall back to head and tail."""
    history, counter = state.history, state.meter.tokens
    estimates = {id(item): history.item_tokens(index) for index, item in enumerate(history.items)}
    items = without_memories(state.request_items(turn, emit))  # recalled again after the rebuild
    tokens = [estimates.get(id(item)) or counter.item_tokens(item) for item in items]
    request = user(compaction_prompt(turn.config.agent_home, focus))
    protected = protected_prefix_length(items)
    budget = summarizer_budget(state.meter)  # our count, as `tokens` are; room left for the summary
    budget -= parts.overhead(counter)
    budget -= counter.item_tokens(request)
    trimmed = 0
    if sum(tokens) > budget:  # the newest outputs are cut, so the cached prefix is still sent as it was
        cached = min(len(items), max(protected, state.meter.window.sent_items))
        items, tokens, shortened = shorten_newest_outputs(items, tokens, cached, sum(tokens) - budget)
        if shortened:
            emit(
                ev.Notice(
                    f"Shortened the newest {shortened} tool output(s) in the summarizing request to fit the window."
                )
            )
    for attempt in range(MAX_TRIM_ROUNDS):
        # The same system prompt and tools: the cached prefix is reused.
        prompt = Prompt(parts.instructions, [*items, request], list(parts.tools), web_search=parts.web_search)
        try:
            text = await run_summarizer(services.clients.current(), state.meter, prompt, emit)
            if text:
                return Summary(text, trimmed)
            # It offers the tools (for the cached prefix): a model may call one, or only think.
            emit(ev.Warning("The model wrote no summary; keeping a head-and-tail excerpt of the conversation instead."))
            break
        except ContextWindowExceeded:
            target = min(budget, int(sum(tokens) * (FIRST_TRIM if attempt == 0 else LATER_TRIM)))
            items, tokens, removed = trim_oldest(items, tokens, protected, target)
            if removed == 0:
                emit(ev.Warning("The summarizing request does not fit even with every older item trimmed."))
                break
            trimmed += removed
        except ModelError as exc:
            emit(
                ev.Warning(f"Summarizing failed ({exc}); keeping a head-and-tail excerpt of the conversation instead.")
            )
            break
    else:
        emit(ev.Warning("The summarizing request kept overflowing; keeping a head-and-tail excerpt instead."))
    return Summary(fallback_summary(history.items, recent_messages_budget(state, parts)), trimmed, fallback=True)


def recent_messages_budget(state: SessionState, parts: RequestParts) -> int:
    """Tokens (our count) for the user messages kept through a compaction: a quarter of what the
    threshold leaves beside the system prompt, tools and initial context, in the server's tokens."""
    meter = state.meter
    counter = meter.tokens
    fixed = parts.overhead(counter) + meter.initial_tokens(state.initial)
    ceiling = counter.uncalibrated(meter.auto_compact_limit or meter.effective_window) - fixed
    return user_message_budget(max(1, ceiling), max(1, ceiling))


async def run_summarizer(client: ModelClient, meter: ContextMeter, prompt: Prompt, emit: Emit) -> str:
    """One summarizing request. Its text is not streamed to the user; its usage is counted."""
    texts: list[str] = []
    async for event in client.stream(prompt):
        if isinstance(event, stream.OutputItem):
            item = event.item
            if isinstance(item, Message) and item.role == "assistant":
                texts.append(item.text)
        elif isinstance(event, stream.Retrying):
            emit(ev.Retry(event.attempt, event.max_attempts, event.delay, event.reason))
            texts.clear()
        elif isinstance(event, stream.Completed) and event.usage is not None:
            # Counted in the session's total, but not as the context's size: it measured the
            # old history plus the compaction prompt.
            meter.count_usage(event.usage)
    return "\n\n".join(text.strip() for text in texts if text.strip())


def compaction_prompt(agent_home: Path, focus: str | None) -> str:
    library = _library(agent_home)
    text = library.render("compact.md").strip()
    if focus and focus.strip():
        text += "\n\n" + library.render("compact_focus.md", focus=focus.strip()).strip()
    return text


def _library(agent_home: Path) -> PromptLibrary:
    library = prompt_library(agent_home)
    try:
        library.expand("compact.md")
        library.expand("compact_focus.md")
        return library
    except PromptError:  # a broken user override must not stop compaction
        return PromptLibrary([bundled_prompts_dir()])


def fresh_initial(
    turn: TurnContext, state: SessionState, services: SessionServices, emit: Emit
) -> InitialContext | None:
    """The initial context rebuilt now (AGENTS.md re-read, full environment); None if it fails."""
    old = state.initial
    try:
        initial = fresh_initial_context(
            turn.config, turn.mode, services.approvals.permissions, state.meter.window.tokens, turn.plugin_skills
        )
    except Exception as exc:  # keep the old context rather than lose the compaction
        emit(ev.Warning(f"Could not rebuild the initial context ({exc}); reusing the previous one."))
        return None
    for warning in initial.warnings:
        if old is None or warning not in old.warnings:
            emit(ev.Warning(warning))
    return initial


def previous_initial_items(state: SessionState) -> list[Item]:
    return list(state.initial.items) if state.initial is not None else []


# --- overflow during a turn ---------------------------------------------------------------------


async def recover_from_overflow(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    emit: Emit,
    error: ContextWindowExceeded,
    retry: Callable[[RequestParts], Awaitable[list[Item]]],
) -> tuple[RequestParts, list[Item]] | None:
    """Compact and send the request again, once, with the parts it then has; the parts and what
    came back. None (after reporting) if it still fails."""
    await state.meter.window.learn_from_overflow(error, emit)  # the window the server named
    finished = await compact(turn, state, services, emit, "overflow")
    parts = state.request_parts(turn)
    if finished is not None and finished.applied:
        try:
            return parts, await retry(parts)
        except ContextWindowExceeded as again:
            error = again
    fail_window_full(state, parts, emit, str(error))
    return None


def fail_window_full(state: SessionState, parts: RequestParts, emit: Emit, detail: str) -> None:
    """End the turn: the request cannot fit. Says what is too big and marks the window full."""
    biggest, kind = largest_item(state.history)
    message = (
        "The conversation does not fit in the model's context window, even after compaction "
        f"(window: {state.meter.effective_window:,} tokens usable; largest item: {kind}, about {biggest:,} tokens). "
        "Shorten the request, start a new turn, or set `model_context_window` if the model's window is "
        f"different. Provider said: {detail}"
    )
    emit(ev.Error(message, fatal=True))
    emit(window_full_event(state.meter, parts))
    emit(ev.TurnFailed(message))


def largest_item(history: RecordingHistory) -> tuple[int, str]:
    if not len(history):
        return 0, "none"
    index = max(range(len(history)), key=history.item_tokens)
    item = history.items[index]
    kind = f"{item.role} message" if isinstance(item, Message) else type(item).__name__
    return history.item_tokens(index), kind


def window_full_event(meter: ContextMeter, parts: RequestParts) -> ev.TokenCount:
    event = meter.token_count_event(parts)
    return ev.TokenCount(event.last, event.total, event.context_window, event.context_window, event.counting_method)


def oversized_input(state: SessionState, parts: RequestParts, text: str) -> str | None:
    """Why ``text`` can never fit (it is kept whole through compactions), or None if it can."""
    meter = state.meter
    counter = meter.tokens
    tokens = counter.calibrated(counter.text_tokens(text))
    overhead = counter.calibrated(parts.overhead(counter))
    room = meter.effective_window - overhead - counter.calibrated(meter.initial_tokens(state.initial))
    if tokens <= room:
        return None
    return (
        f"Your message is about {tokens:,} tokens, but only about {max(0, room):,} fit in the model's "
        f"context window ({meter.effective_window:,} usable). Shorten it, or attach less."
    )


async def reject_oversized_input(turn: TurnContext, state: SessionState, text: str, emit: Emit) -> bool:
    """Fail the turn up front when the new message alone can never fit. True if rejected."""
    meter = state.meter
    parts = state.request_parts(turn)
    counter = meter.tokens
    await meter.count_exactly_near(meter.effective_window, parts, counter.calibrated(counter.text_tokens(text)))
    reason = oversized_input(state, parts, text)
    if reason is None:
        return False
    emit(ev.Error(reason, fatal=True))
    emit(window_full_event(meter, parts))
    emit(ev.TurnFailed(reason))
    return True
