"""``account/usage/read`` with a ``threadId``: what one thread's model requests used, in Codex's
``GetAccountTokenUsageResponse`` (its ``threadUsage``: tokens per model and the estimated cost in
USD micros). The web page's session list shows it; without a ``threadId`` there is no account to
report on, and the summary is empty.

The cost is agent-cli's estimate (models/pricing.py, or ``[model_prices]`` in config); a model
without a known price has ``estimatedUsageUsdMicros: null`` (unknown, not zero)."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_cli.app_server.connection import Connection
from agent_cli.app_server.dispatch import Method
from agent_cli.app_server.host import ThreadHost
from agent_cli.app_server.sessions import Spent
from agent_cli.models.pricing import price_for

EMPTY_SUMMARY: dict[str, Any] = {
    "lifetimeTokens": None,
    "peakDailyTokens": None,
    "currentStreakDays": None,
    "longestStreakDays": None,
    "longestRunningTurnSec": None,
}


def thread_usage(thread_id: str, spent: Spent) -> dict[str, Any]:
    usage = spent.usage
    try:
        price = price_for(spent.model, spent.prices if isinstance(spent.prices, dict) else None)
    except ValueError:
        price = None  # a malformed configured price: unknown, as /cost says
    micros = round(price.cost(usage) * 1_000_000) if price is not None else None
    group = {
        "model": spent.model or None,
        "inputTokens": usage.input_tokens,
        "cachedInputTokens": usage.cached_input_tokens,
        "outputTokens": usage.output_tokens,
        "totalTokens": usage.input_tokens + usage.output_tokens,
        "estimatedUsageCreditsMicros": 0,  # no credits: the user's own keys
    }
    return {
        "threadId": thread_id,
        "estimatedUsageCreditsMicros": 0,
        "estimatedUsageUsdMicros": micros,
        "nativeUsageUsdMicros": None,
        "groups": [group],
    }


def usage_methods(host: ThreadHost) -> dict[str, Method]:
    async def usage_read(connection: Connection, params: dict[str, Any] | None) -> dict[str, Any]:
        thread_id = (params or {}).get("threadId")
        if not isinstance(thread_id, str) or not thread_id:
            return {"summary": EMPTY_SUMMARY, "dailyUsageBuckets": None, "threadUsage": None}
        if (thread := host.find(thread_id)) is not None:
            thread_id, spent = thread.id, host.door.spent(thread.session)
        else:
            thread_id = await asyncio.to_thread(host.door.resolve_id, thread_id)
            spent = await asyncio.to_thread(host.door.stored_spent, thread_id)
        return {"summary": EMPTY_SUMMARY, "dailyUsageBuckets": None, "threadUsage": thread_usage(thread_id, spent)}

    return {"account/usage/read": usage_read}
