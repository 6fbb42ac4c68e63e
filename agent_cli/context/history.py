"""The conversation as the model will see it.

History is append-only between compactions so every request's prefix matches the previous
one. Before each request it is normalized: every tool call gets an output (a missing one gets a
synthetic "aborted" output) and outputs without a call are dropped.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from agent_cli.items import Item, Message, ToolCall, ToolOutput

ABORTED_OUTPUT = "aborted: the tool call was interrupted before it finished"


class History:
    def __init__(self, items: Iterable[Item] = (), estimate: Callable[[Item], int] | None = None):
        self._items: list[Item] = []
        self._estimate = estimate
        self._tokens: list[int] = []  # per-item estimate, computed once on insert
        self._token_total = 0
        self._open_calls: set[str] = set()  # calls recorded without an output yet
        self._orphans: set[str] = set()  # outputs recorded without their call
        self._calls: set[str] = set()
        self._with_images = 0  # items carrying images: a model without vision needs notes for them
        for item in items:
            self.record(item)

    def __len__(self) -> int:
        return len(self._items)

    @property
    def items(self) -> list[Item]:
        """A copy of the recorded items, as recorded."""
        return list(self._items)

    @property
    def has_images(self) -> bool:
        return self._with_images > 0

    @property
    def estimated_tokens(self) -> int:
        return self._token_total

    def estimated_tokens_since(self, index: int) -> int:
        return sum(self._tokens[index:])

    def item_tokens(self, index: int) -> int:
        return self._tokens[index]

    def record(self, item: Item) -> None:
        tokens = self._estimate(item) if self._estimate else 0
        self._items.append(item)
        self._tokens.append(tokens)
        self._token_total += tokens
        self._track(item)

    def recount(self) -> None:
        """Count every item again (once, when counting switches from the estimate to exact)."""
        self._tokens = [self._estimate(item) if self._estimate else 0 for item in self._items]
        self._token_total = sum(self._tokens)

    def _track(self, item: Item) -> None:
        if isinstance(item, (Message, ToolOutput)) and item.images:
            self._with_images += 1
        if isinstance(item, ToolCall):
            self._calls.add(item.call_id)
            if item.call_id in self._orphans:
                self._orphans.discard(item.call_id)
            else:
                self._open_calls.add(item.call_id)
        elif isinstance(item, ToolOutput):
            if item.call_id in self._calls:
                self._open_calls.discard(item.call_id)
            else:
                self._orphans.add(item.call_id)

    def _retrack(self) -> None:
        self._open_calls, self._orphans, self._calls = set(), set(), set()
        self._with_images = 0
        for item in self._items:
            self._track(item)

    def extend(self, items: Iterable[Item]) -> None:
        for item in items:
            self.record(item)

    def replace(self, items: Iterable[Item]) -> None:
        """Swap in a new history (after compaction)."""
        self._items, self._tokens, self._token_total = [], [], 0
        self._open_calls, self._orphans, self._calls = set(), set(), set()
        self._with_images = 0
        self.extend(items)

    def for_request(self) -> list[Item]:
        """The normalized items to send. Does not change what was recorded."""
        if not self._open_calls and not self._orphans:
            return list(self._items)  # already normal: skip the O(n) pass
        return normalize(self._items)

    def close_open_calls(self) -> int:
        """Record an "aborted" output for every call that has none. Returns how many."""
        answered = {item.call_id for item in self._items if isinstance(item, ToolOutput)}
        open_calls = [item for item in self._items if isinstance(item, ToolCall) and item.call_id not in answered]
        for call in open_calls:
            self.record(ToolOutput(call.call_id, ABORTED_OUTPUT, success=False))
        return len(open_calls)

    def remove_oldest(self) -> int:
        """Drop the oldest item; a tool call takes its output with it (and vice versa).

        Returns the number of items removed (0 when empty).
        """
        if not self._items:
            return 0
        first = self._items[0]
        doomed = {0}
        if isinstance(first, (ToolCall, ToolOutput)):
            doomed |= {
                i
                for i, item in enumerate(self._items)
                if isinstance(item, (ToolCall, ToolOutput)) and item.call_id == first.call_id
            }
        keep = [(item, tokens) for i, (item, tokens) in enumerate(zip(self._items, self._tokens)) if i not in doomed]
        self._items = [item for item, _ in keep]
        self._tokens = [tokens for _, tokens in keep]
        self._token_total = sum(self._tokens)
        self._retrack()
        return len(doomed)


def normalize(items: list[Item]) -> list[Item]:
    """Pair every call with an output, in order; drop orphan outputs.

    A missing output is inserted right after the last item of the call's batch, where the
    provider expects it.
    """
    calls = {item.call_id for item in items if isinstance(item, ToolCall)}
    answered = {item.call_id for item in items if isinstance(item, ToolOutput)}
    result: list[Item] = []
    pending: list[str] = []  # calls of the current batch still without an output
    for item in items:
        if isinstance(item, ToolOutput):
            if item.call_id not in calls:
                continue
            result.append(item)
            continue
        if not isinstance(item, ToolCall) and pending:
            result.extend(ToolOutput(call_id, ABORTED_OUTPUT, success=False) for call_id in pending)
            pending = []
        result.append(item)
        if isinstance(item, ToolCall) and item.call_id not in answered:
            pending.append(item.call_id)
    result.extend(ToolOutput(call_id, ABORTED_OUTPUT, success=False) for call_id in pending)
    return result
