"""The session's token counter per model, and the one in use.

Each model has its own counter (its tokenizer, image formula and calibration), kept for the
session so switching back to a model (``/model``, a command file's ``model:``) finds its
calibration again. The history estimates its items with whichever counter is current.
"""

from __future__ import annotations

from collections.abc import Callable

from agent_cli.context.tokens import TokenCounter
from agent_cli.items import Item


class TokenCounters:
    def __init__(self, wire_api: str, sees_images: Callable[[str], bool], model: str):
        self._wire_api = wire_api
        self._sees_images = sees_images  # a model's vision: how its images are counted
        self._by_model: dict[str, TokenCounter] = {}
        self.current = self.for_model(model)

    def for_model(self, model: str) -> TokenCounter:
        counter = self._by_model.get(model)
        if counter is None:
            counter = self._by_model[model] = TokenCounter.for_model(model, self._wire_api)
        counter.vision = self._sees_images(model)
        return counter

    def item_tokens(self, item: Item) -> int:
        """``item``'s estimate by the current counter (what the history records)."""
        return self.current.item_tokens(item)
