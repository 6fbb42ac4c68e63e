"""When to compact, so that the summarizing request always fits and reuses the prompt cache.

The summarizing request is the last request plus what came back since and the compaction prompt;
the summary itself is generated inside the same window. Waiting until the context crosses the
threshold is not enough when one step (a large tool output) jumps past the room that request
needs: the summary would then be refused and the fallback would trim the oldest items, which
loses the cached prefix. So the decision also looks one step ahead: when another step as large
as the last one would leave no room for the summary, the conversation is compacted now.

If the summarizing request still would not fit (a step much larger than the one before), the
newest tool outputs are shortened in it instead of the oldest items dropped: the prefix the
provider has cached stays byte-identical.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_cli.context.truncate import TruncationPolicy, truncate_middle
from agent_cli.items import Item, ToolOutput
from agent_cli.session.meter import ContextMeter
from agent_cli.session.request_parts import RequestParts
from agent_cli.session.session_state import SessionState

SUMMARY_RESERVE_TOKENS = 2_000  # the summary the model writes, at most (shorter in small windows)
SUMMARY_RESERVE_SHARE = 8  # ...and never more than 1/8 of the window
MIN_KEPT_OUTPUT_TOKENS = 64  # a shortened output keeps at least this much


def summary_reserve(meter: ContextMeter) -> int:
    """Tokens (the server's) kept free for the summary the model writes."""
    return min(SUMMARY_RESERVE_TOKENS, max(128, meter.effective_window // SUMMARY_RESERVE_SHARE))


def summary_room(meter: ContextMeter, prompt_tokens: int) -> int:
    """Tokens the summarizing request needs beyond the context: its prompt and the summary."""
    return meter.tokens.calibrated(prompt_tokens) + summary_reserve(meter)


def step_too_large_for_room(state: SessionState, parts: RequestParts, prompt_tokens: int) -> bool:
    """True when one more step as large as the last would leave no room to summarize in the window."""
    growth = last_step_tokens(state)
    if growth <= 0:
        return False
    meter = state.meter
    ahead = meter.context_tokens(parts) + meter.tokens.calibrated(growth) + summary_room(meter, prompt_tokens)
    return ahead > meter.effective_window


def note_request(state: SessionState) -> None:
    """Before a request goes out: remember which items joined the history since the last one."""
    sent, now = state.meter.window.sent_items, len(state.history)
    if 0 < sent <= now:
        state.compaction.last_step = (sent, now)


def last_step_tokens(state: SessionState) -> int:
    """Tokens (our count, as it is now: exact once the tokenizer is loaded) of the last step."""
    step, history = state.compaction.last_step, state.history
    if step is None or step[1] > len(history):
        return 0
    return history.estimated_tokens_since(step[0]) - history.estimated_tokens_since(step[1])


def summarizer_budget(meter: ContextMeter) -> int:
    """Tokens (our count) the summarizing request may carry, prompt and tools included."""
    return meter.tokens.uncalibrated(meter.effective_window - summary_reserve(meter))


def shorten_newest_outputs(
    items: Sequence[Item], tokens: Sequence[int], start: int, over: int
) -> tuple[list[Item], list[int], int]:
    """Cut the tool outputs from ``start`` on (newest first) until ``over`` tokens are saved.

    Everything before ``start`` (what the provider has cached) stays byte-identical. Returns the
    items, their estimates and how many outputs were shortened.
    """
    items, tokens = list(items), list(tokens)
    shortened = 0
    for index in range(len(items) - 1, start - 1, -1):
        if over <= 0:
            break
        item = items[index]
        if not isinstance(item, ToolOutput) or tokens[index] <= MIN_KEPT_OUTPUT_TOKENS:
            continue
        keep = max(MIN_KEPT_OUTPUT_TOKENS, tokens[index] - over)
        text = truncate_middle(item.output, TruncationPolicy("tokens", keep))
        items[index] = ToolOutput(item.call_id, text, item.success, images=())
        saved = tokens[index] - keep
        tokens[index] = keep
        over -= saved
        shortened += 1
    return items, tokens, shortened
