"""``/cost``: the session's tokens and what they cost, from the provider's reported usage and the
price list (``models/pricing.py``, or ``[model_prices]`` in config). ``/status`` shows the same line."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.models.pricing import price_for
from agent_cli.session.session import Session


async def cost_command(inv: Invocation) -> None:
    if inv.args:
        raise InputError("/cost takes no arguments")
    inv.emit(ev.Notice(cost_text(inv.session), title="cost"))


def cost_text(session: Session) -> str:
    usage = session.total_usage
    cached = f" ({usage.cached_input_tokens:,} cached)" if usage.cached_input_tokens else ""
    tokens = f"{usage.input_tokens:,} in{cached}, {usage.output_tokens:,} out"
    try:
        price = price_for(session.model, session.config.raw.get("model_prices"))
    except ValueError as exc:
        return f"{tokens}; no price: {exc}"
    if price is None:
        return f'{tokens}; no price known for {session.model} (set one in [model_prices."{session.model}"])'
    return f"{tokens}; about ${price.cost(usage):.4f} at {session.model}'s prices (an estimate)"
