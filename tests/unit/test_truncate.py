"""Truncation of tool outputs: budgets, markers, UTF-8 boundaries, line counts."""

from __future__ import annotations

import re

import pytest

from agent_cli.context.truncate import (
    TruncationPolicy,
    approx_tokens,
    count_lines,
    take_head,
    take_tail,
    truncate_head_tail,
    truncate_middle,
    truncate_text,
)

BYTES_100 = TruncationPolicy("bytes", 100)
MARKER = re.compile(r"…(\d+) (chars|tokens) truncated…")


def _parts(result: str) -> tuple[str, int, str]:
    match = MARKER.search(result)
    assert match, result
    return result[: match.start()], int(match.group(1)), result[match.end() :]


def test_approx_tokens_is_ceil_of_utf8_bytes_over_four():
    assert approx_tokens("") == 0
    assert approx_tokens("abcd") == 1
    assert approx_tokens("abcde") == 2
    assert approx_tokens("é") == 1  # 2 bytes
    assert approx_tokens("😀😀") == 2  # 8 bytes


def test_count_lines():
    assert count_lines("") == 0
    assert count_lines("a") == 1
    assert count_lines("a\n") == 1
    assert count_lines("a\nb") == 2
    assert count_lines("a\n\n") == 2


def test_under_and_at_budget_return_the_text_unchanged():
    assert truncate_text("x" * 99, BYTES_100) == "x" * 99
    assert truncate_text("x" * 100, BYTES_100) == "x" * 100
    assert truncate_text("", TruncationPolicy("bytes", 0)) == ""
    assert truncate_text("a" * 400, TruncationPolicy("tokens", 100)) == "a" * 400


def test_over_budget_keeps_head_and_tail_with_line_count_and_marker():
    text = "".join(f"line {i:03d}\n" for i in range(100))  # 900 bytes, 100 lines
    out = truncate_text(text, BYTES_100)
    assert out.startswith("Total output lines: 100\n\n")
    head, removed, tail = _parts(out.removeprefix("Total output lines: 100\n\n"))
    assert text.startswith(head) and text.endswith(tail)
    assert head and tail
    assert abs(len(head) - len(tail)) <= 1  # half each
    assert len(head) + removed + len(tail) == len(text)  # the marker counts what was dropped
    assert len(out.encode()) <= 100  # header and marker count against the budget


def test_token_policy_marker_counts_estimated_tokens():
    text = "x" * 1000
    out = truncate_text(text, TruncationPolicy("tokens", 50))  # 200 bytes
    head, removed_tokens, tail = _parts(out.split("\n\n", 1)[1])
    assert "tokens truncated" in out
    assert removed_tokens == -(-(1000 - len(head) - len(tail)) // 4)
    assert len(out.encode()) <= 200


def test_zero_budget_leaves_only_the_marker():
    assert truncate_text("hello\nworld\n", TruncationPolicy("bytes", 0)) == "…12 chars truncated…"
    assert truncate_text("hello\nworld\n", TruncationPolicy("tokens", 0)) == "…3 tokens truncated…"


def test_budget_smaller_than_the_marker_keeps_no_text():
    text = "abcdefghij" * 10
    out = truncate_text(text, TruncationPolicy("bytes", 30))  # header + marker do not fit
    assert out == "Total output lines: 1\n\n…100 chars truncated…"
    body = truncate_middle(text, BYTES_100, byte_budget=5)
    assert body == "…100 chars truncated…"


def test_multibyte_characters_are_never_split():
    text = "é" * 100 + "😀" * 100  # 200 + 400 bytes
    for budget in range(40, 120):
        out = truncate_middle(text, BYTES_100, byte_budget=budget)
        out.encode("utf-8")  # valid
        head, removed, tail = _parts(out)
        assert text.startswith(head) and text.endswith(tail)
        assert len(head) + removed + len(tail) == len(text)
        assert len(out.encode()) <= budget
        assert "\ufffd" not in out


def test_take_head_and_tail_on_boundaries():
    assert take_head("aé", 2) == "a"
    assert take_head("aé", 3) == "aé"
    assert take_tail("éa", 2) == "a"
    assert take_tail("😀", 3) == ""
    assert take_head("abc", 0) == ""


def test_truncate_head_tail_of_a_stream_whose_middle_was_dropped():
    out = truncate_head_tail("HEAD" * 100, "TAIL" * 100, total_bytes=10_000, total_chars=10_000, policy=BYTES_100)
    head, removed, tail = _parts(out)
    assert head.startswith("HEAD") and tail.endswith("TAIL")
    assert len(head) + removed + len(tail) == 10_000


def test_invalid_policy_rejected():
    with pytest.raises(ValueError):
        TruncationPolicy("lines", 10)  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        TruncationPolicy("bytes", -1)
