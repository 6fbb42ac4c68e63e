"""Cut text to a budget for the model's context: keep the head and the tail, drop the middle.

Pure functions with named limits. A policy is a byte budget or a token budget (tokens are
estimated as ceil(utf-8 bytes / 4)). Over budget, the head and the tail get half of the budget
each, cut on UTF-8 character boundaries, with a marker between them that says how much was
dropped: ``…N chars truncated…`` (byte policy) or ``…N tokens truncated…`` (token policy).

The marker counts against the budget, so a truncated body is never longer than
``max(budget, len(marker))`` bytes. ``truncate_text`` also puts ``Total output lines: N`` and a
blank line in front (the header counts against the budget too); a zero budget leaves only the
marker.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BYTES_PER_TOKEN = 4


@dataclass(frozen=True, slots=True)
class TruncationPolicy:
    kind: Literal["bytes", "tokens"]
    limit: int

    def __post_init__(self) -> None:
        if self.kind not in ("bytes", "tokens"):
            raise ValueError(f"truncation kind must be 'bytes' or 'tokens', got {self.kind!r}")
        if self.limit < 0:
            raise ValueError(f"truncation limit must be >= 0, got {self.limit}")

    @property
    def byte_budget(self) -> int:
        return self.limit if self.kind == "bytes" else self.limit * BYTES_PER_TOKEN

    def fits(self, text: str) -> bool:
        return len(_utf8(text)) <= self.byte_budget


def approx_tokens(text: str) -> int:
    """Estimated tokens: ceil(utf-8 bytes / 4)."""
    return _ceil_div(len(_utf8(text)), BYTES_PER_TOKEN)


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a final line without a newline still counts."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def take_head(text: str, max_bytes: int) -> str:
    """The longest prefix of ``text`` that fits in ``max_bytes`` UTF-8 bytes."""
    return _head_bytes(_utf8(text), max_bytes).decode("utf-8")


def take_tail(text: str, max_bytes: int) -> str:
    """The longest suffix of ``text`` that fits in ``max_bytes`` UTF-8 bytes."""
    return _tail_bytes(_utf8(text), max_bytes).decode("utf-8")


def truncation_marker(policy: TruncationPolicy, removed_bytes: int, removed_chars: int) -> str:
    if policy.kind == "tokens":
        return f"…{_ceil_div(max(0, removed_bytes), BYTES_PER_TOKEN)} tokens truncated…"
    return f"…{max(0, removed_chars)} chars truncated…"


def lines_header(total_lines: int) -> str:
    return f"Total output lines: {total_lines}\n\n"


def truncate_middle(text: str, policy: TruncationPolicy, byte_budget: int | None = None) -> str:
    """``text`` unchanged if it fits, else head + marker + tail (no line-count header)."""
    data = _utf8(text)
    budget = policy.byte_budget if byte_budget is None else byte_budget
    if len(data) <= budget:
        return text
    return _join(data, data, len(data), len(text), policy, budget)


def truncate_head_tail(
    head: str,
    tail: str,
    *,
    total_bytes: int,
    total_chars: int,
    policy: TruncationPolicy,
    byte_budget: int | None = None,
) -> str:
    """Truncate a stream known only by its beginning and end (the middle was never kept).

    ``head`` starts the stream and ``tail`` ends it; the totals describe the whole stream.
    Always returns a truncated body: head + marker + tail within the budget.
    """
    budget = policy.byte_budget if byte_budget is None else byte_budget
    return _join(_utf8(head), _utf8(tail), total_bytes, total_chars, policy, budget)


def truncate_text(text: str, policy: TruncationPolicy) -> str:
    """``text`` if it fits the policy, else ``Total output lines: N`` + blank line + truncated body."""
    data = _utf8(text)
    budget = policy.byte_budget
    if len(data) <= budget:
        return text
    if budget == 0:
        return truncation_marker(policy, len(data), len(text))
    header = lines_header(count_lines(text))
    body_budget = max(0, budget - len(header.encode("utf-8")))
    return header + _join(data, data, len(data), len(text), policy, body_budget)


# --- internals --------------------------------------------------------------------------------


def _utf8(text: str) -> bytes:
    # "replace" so a stray surrogate can never make truncation itself fail
    return text.encode("utf-8", "replace")


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _is_continuation(byte: int) -> bool:
    return byte & 0xC0 == 0x80


def _head_bytes(data: bytes, max_bytes: int) -> bytes:
    if len(data) <= max_bytes:
        return data
    cut = max(0, max_bytes)
    while cut > 0 and _is_continuation(data[cut]):
        cut -= 1
    return data[:cut]


def _tail_bytes(data: bytes, max_bytes: int) -> bytes:
    if len(data) <= max_bytes:
        return data
    start = len(data) - max(0, max_bytes)
    while start < len(data) and _is_continuation(data[start]):
        start += 1
    return data[start:]


def _join(head: bytes, tail: bytes, total_bytes: int, total_chars: int, policy: TruncationPolicy, budget: int) -> str:
    # Reserve room for the longest marker this stream could need; the real one is never longer.
    reserve = len(truncation_marker(policy, total_bytes, total_chars).encode("utf-8"))
    keep = budget - reserve
    if keep <= 0:
        return truncation_marker(policy, total_bytes, total_chars)
    kept_head = _head_bytes(head, keep // 2)
    kept_tail = _tail_bytes(tail, keep - keep // 2)
    head_text = kept_head.decode("utf-8", "replace")
    tail_text = kept_tail.decode("utf-8", "replace")
    removed_bytes = total_bytes - len(kept_head) - len(kept_tail)
    removed_chars = total_chars - len(head_text) - len(tail_text)
    return head_text + truncation_marker(policy, removed_bytes, removed_chars) + tail_text
