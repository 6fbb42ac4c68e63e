"""Model facts by name: context windows, tokenizers, default providers."""

from __future__ import annotations

import pytest

from agent_cli.models.model_info import (
    DEFAULT_CONTEXT_WINDOW,
    context_window_for,
    default_provider_for,
    encoding_for,
    is_reasoning_model,
    uses_adaptive_thinking,
)


@pytest.mark.parametrize(
    "model, window",
    [
        ("gpt-5", 272_000),
        ("gpt-5-codex", 272_000),
        ("gpt-5.1-mini", 272_000),
        ("gpt-5-chat-latest", 128_000),
        ("gpt-4.1", 1_047_576),
        ("gpt-4.1-mini-2025-04-14", 1_047_576),
        ("gpt-4o-2024-08-06", 128_000),
        ("gpt-4", 8_192),
        ("o3", 200_000),
        ("o4-mini", 200_000),
        ("claude-sonnet-4-5-20250929", 200_000),
        ("claude-opus-4-6", 200_000),
        ("llama3.1:8b", 131_072),
        ("llama3:8b", 8_192),
        ("meta-llama/Llama-3.3-70B-Instruct", 131_072),
        ("qwen2.5-coder:7b", 32_768),
        ("qwen3-coder:30b", 262_144),
        ("openai/gpt-4o-mini", 128_000),
        ("some-unknown-model", DEFAULT_CONTEXT_WINDOW),
        ("", DEFAULT_CONTEXT_WINDOW),
    ],
)
def test_context_window_for(model, window):
    assert context_window_for(model) == window


@pytest.mark.parametrize(
    "model, encoding",
    [
        ("gpt-4o-mini", "o200k_base"),
        ("gpt-4.1", "o200k_base"),
        ("gpt-5-codex", "o200k_base"),
        ("o3-mini", "o200k_base"),
        ("gpt-4", "cl100k_base"),
        ("gpt-4-turbo", "cl100k_base"),
        ("gpt-3.5-turbo", "cl100k_base"),
        ("claude-sonnet-4-5", None),
        ("llama3.1", None),
    ],
)
def test_encoding_for(model, encoding):
    assert encoding_for(model) == encoding


def test_default_provider_and_reasoning_families():
    assert default_provider_for("claude-opus-4-6") == "anthropic"
    assert default_provider_for("gpt-5") == "openai"
    assert default_provider_for("llama3.1") == "openai"
    assert is_reasoning_model("gpt-5") and is_reasoning_model("o4-mini") and is_reasoning_model("gpt-oss-20b")
    assert not is_reasoning_model("gpt-4.1") and not is_reasoning_model("gpt-5-chat-latest")


@pytest.mark.parametrize(
    "model, adaptive",
    [
        ("claude-opus-4-6", True),
        ("claude-sonnet-5", True),
        ("claude-mythos-preview", True),
        ("claude-sonnet-4-5-20250929", False),
        ("claude-opus-4-20250514", False),
        ("claude-3-7-sonnet-latest", False),
        ("gpt-5", False),
    ],
)
def test_adaptive_thinking_models(model, adaptive):
    assert uses_adaptive_thinking(model) is adaptive
