"""What a model's tokens cost, for `agent exec --max-budget-usd`.

Prices are USD per million tokens from the providers' public price lists; a model not listed has
no price unless the user gives one (``[model_prices.NAME]`` in config). The figure is an estimate:
Anthropic's cache writes (1.25x input) and long-context surcharges are not counted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from agent_cli.models.base import Usage


@dataclass(frozen=True, slots=True)
class Price:
    input: float  # USD per million uncached input tokens
    cached_input: float
    output: float  # reasoning tokens are output tokens

    def cost(self, usage: Usage) -> float:
        uncached = max(0, usage.input_tokens - usage.cached_input_tokens)
        return (
            uncached * self.input + usage.cached_input_tokens * self.cached_input + usage.output_tokens * self.output
        ) / 1_000_000

    @classmethod
    def from_table(cls, table: dict[str, Any]) -> Price:
        """``{input = 1.25, cached_input = 0.125, output = 10}``; cached_input defaults to input."""
        try:
            value = {key: float(table[key]) for key in ("input", "output")}
            cached = float(table.get("cached_input", value["input"]))
        except (KeyError, TypeError, ValueError) as exc:
            raise ValueError(
                f"a model price needs numbers `input` and `output` (USD per million tokens): {exc}"
            ) from None
        return cls(value["input"], cached, value["output"])


# Longest matching prefix wins: "gpt-5-mini-2025-08-07" is priced as "gpt-5-mini".
KNOWN_PRICES: dict[str, Price] = {
    "gpt-5-nano": Price(0.05, 0.005, 0.40),
    "gpt-5-mini": Price(0.25, 0.025, 2.00),
    "gpt-5": Price(1.25, 0.125, 10.00),
    "gpt-4.1-nano": Price(0.10, 0.025, 0.40),
    "gpt-4.1-mini": Price(0.40, 0.10, 1.60),
    "gpt-4.1": Price(2.00, 0.50, 8.00),
    "gpt-4o-mini": Price(0.15, 0.075, 0.60),
    "gpt-4o": Price(2.50, 1.25, 10.00),
    "o4-mini": Price(1.10, 0.275, 4.40),
    "o3": Price(2.00, 0.50, 8.00),
    "claude-opus-4-5": Price(5.00, 0.50, 25.00),
    "claude-opus-4": Price(15.00, 1.50, 75.00),
    "claude-sonnet-4": Price(3.00, 0.30, 15.00),
    "claude-haiku-4-5": Price(1.00, 0.10, 5.00),
    "claude-3-5-haiku": Price(0.80, 0.08, 4.00),
}


def price_for(model: str, configured: dict[str, Any] | None = None) -> Price | None:
    """The configured price of ``model`` (exact name), else the longest known prefix, else None."""
    if configured and isinstance(configured.get(model), dict):
        return Price.from_table(configured[model])
    matches = [prefix for prefix in KNOWN_PRICES if model.startswith(prefix)]
    return KNOWN_PRICES[max(matches, key=len)] if matches else None
