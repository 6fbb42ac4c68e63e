"""Limits on one headless run (`agent exec --max-turns`, `--max-budget-usd`): checked before each
model request of a turn, so a run stops between requests with the history whole."""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.models.base import Usage
from agent_cli.models.pricing import Price


class LimitReached(Exception):
    """The run may send no more requests. ``reason`` names the limit (``max_turns``, ``max_budget``)."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason


@dataclass
class RunLimits:
    max_requests: int | None = None
    max_cost_usd: float | None = None
    price: Price | None = None  # needed with max_cost_usd (exec checks before the run)
    requests: int = 0
    cost_usd: float = 0.0

    def start_over(self) -> None:
        """Count from zero again (a front end whose limits hold per prompt: claude's --max-turns)."""
        self.requests, self.cost_usd = 0, 0.0

    def before_request(self) -> None:
        if self.max_requests is not None and self.requests >= self.max_requests:
            raise LimitReached(
                "max_turns", f"stopped: --max-turns {self.max_requests} reached ({self.requests} model requests sent)"
            )
        if self.max_cost_usd is not None and self.cost_usd >= self.max_cost_usd:
            raise LimitReached(
                "max_budget",
                f"stopped: the estimated cost ${self.cost_usd:.4f} reached --max-budget-usd {self.max_cost_usd:g}",
            )
        self.requests += 1

    def count(self, usage: Usage) -> None:
        if self.price is not None:
            self.cost_usd += self.price.cost(usage)
