"""What we know about models by name: context window, tokenizer, default provider.

Names are matched by their longest known prefix after normalizing, so dated snapshots
(``gpt-4o-2024-08-06``), Ollama tags (``llama3.1:8b``) and routed names
(``openai/gpt-4.1``, ``meta-llama/Llama-3.3-70B-Instruct``) all resolve.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

DEFAULT_CONTEXT_WINDOW = 128_000

# Prefix -> context window in tokens. For the gpt-5 family this is the input limit (272k of the
# documented 400k total; the rest is reserved for output), which is what compaction needs.
_CONTEXT_WINDOWS: dict[str, int] = {
    # OpenAI
    "gpt-5": 272_000,
    "gpt-5-chat": 128_000,
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o3": 200_000,
    "o4-mini": 200_000,
    "codex-mini": 200_000,
    "gpt-oss": 131_072,
    # Anthropic (the 1M-token window of some Sonnet models is an opt-in beta, not the default)
    "claude-": 200_000,
    "claude-2": 100_000,
    # Google, via OpenRouter or compatible proxies
    "gemini-1.5": 1_048_576,
    "gemini-2": 1_048_576,
    # Common local and open-weight models
    "llama3": 8_192,
    "llama-3": 8_192,
    "llama3.1": 131_072,
    "llama3.2": 131_072,
    "llama3.3": 131_072,
    "llama-3.1": 131_072,
    "llama-3.2": 131_072,
    "llama-3.3": 131_072,
    "llama4": 1_048_576,
    "llama-4": 1_048_576,
    "qwen2.5": 32_768,
    "qwen2.5-coder": 32_768,
    "qwen3": 40_960,
    "qwen3-coder": 262_144,
    "qwq": 131_072,
    "deepseek-r1": 131_072,
    "deepseek-v3": 131_072,
    "deepseek-chat": 131_072,
    "deepseek-coder": 131_072,
    "deepseek-reasoner": 131_072,
    "mistral": 32_768,
    "mistral-nemo": 131_072,
    "mistral-large": 131_072,
    "mistral-small": 131_072,
    "codestral": 262_144,
    "devstral": 131_072,
    "gemma2": 8_192,
    "gemma-2": 8_192,
    "gemma3": 131_072,
    "gemma-3": 131_072,
    "phi4": 16_384,
    "phi-4": 16_384,
    "granite3": 131_072,
    "glm-4": 131_072,
    "kimi-k2": 131_072,
}

# Prefix -> tiktoken encoding name (longest prefix wins, so gpt-4o beats gpt-4).
_ENCODINGS: dict[str, str] = {
    "gpt-5": "o200k_base",
    "gpt-4.1": "o200k_base",
    "gpt-4.5": "o200k_base",
    "gpt-4o": "o200k_base",
    "chatgpt-4o": "o200k_base",
    "gpt-oss": "o200k_base",
    "o1": "o200k_base",
    "o3": "o200k_base",
    "o4": "o200k_base",
    "codex-": "o200k_base",
    "gpt-4": "cl100k_base",
    "gpt-3.5": "cl100k_base",
}

# Models that reason, and so accept the Responses API's `reasoning` parameter and return
# encrypted reasoning we must send back (non-reasoning models reject both).
_REASONING_PREFIXES = ("gpt-5", "o1", "o3", "o4", "codex-", "gpt-oss")
_NON_REASONING_PREFIXES = ("gpt-5-chat",)


def normalize_model_name(model: str) -> str:
    """Lowercase, drop any routing prefix (``openai/``) and surrounding spaces."""
    name = model.strip().lower()
    return name.rsplit("/", 1)[-1]


def _longest_prefix(name: str, table: Iterable[str]) -> str | None:
    best: str | None = None
    for prefix in table:
        if name.startswith(prefix) and (best is None or len(prefix) > len(best)):
            best = prefix
    return best


def known_context_window(model: str) -> int | None:
    """The model table's window for ``model``, or None when the table does not know it."""
    prefix = _longest_prefix(normalize_model_name(model), _CONTEXT_WINDOWS)
    return _CONTEXT_WINDOWS[prefix] if prefix else None


def table_models() -> list[str]:
    """The names (prefixes) the model table knows, for a picker."""
    return list(_CONTEXT_WINDOWS)


def context_window_for(model: str) -> int:
    """The model's context window in tokens, or ``DEFAULT_CONTEXT_WINDOW`` if unknown."""
    return known_context_window(model) or DEFAULT_CONTEXT_WINDOW


def encoding_for(model: str) -> str | None:
    """The tiktoken encoding that fits the model, or None when no OpenAI tokenizer applies."""
    prefix = _longest_prefix(normalize_model_name(model), _ENCODINGS)
    return _ENCODINGS[prefix] if prefix else None


def is_reasoning_model(model: str) -> bool:
    name = normalize_model_name(model)
    if name.startswith(_NON_REASONING_PREFIXES):
        return False
    return name.startswith(_REASONING_PREFIXES)


_CLAUDE_VERSION = re.compile(r"claude-(?:[a-z]+-)?(\d+)(?:[-.](\d))?(?!\d)")


def uses_adaptive_thinking(model: str) -> bool:
    """Claude models from 4.6 on take ``thinking: adaptive`` plus an effort, not a token budget."""
    name = normalize_model_name(model)
    if "mythos" in name:
        return True
    match = _CLAUDE_VERSION.match(name)
    if not match:
        return False
    return (int(match.group(1)), int(match.group(2) or 0)) >= (4, 6)


# Prefix -> whether the model takes images. Longest prefix wins; unknown models are assumed
# blind (a note instead of an error from the server); `model_supports_images` overrides.
_VISION: dict[str, bool] = {
    "gpt-5": True,
    "gpt-4.1": True,
    "gpt-4.5": True,
    "gpt-4o": True,
    "chatgpt-4o": True,
    "gpt-4-turbo": True,
    "gpt-4": False,
    "gpt-3.5": False,
    "o1": True,
    "o1-mini": False,
    "o1-preview": False,
    "o3": True,
    "o3-mini": False,
    "o4-mini": True,
    "codex-mini": True,
    "gpt-oss": False,
    "claude-": True,
    "claude-2": False,
    "claude-instant": False,
    "gemini": True,
    "gemma3": True,
    "gemma-3": True,
    "llama4": True,
    "llama-4": True,
    "llama3.2-vision": True,
    "llava": True,
    "bakllava": True,
    "pixtral": True,
    "mistral-small3.1": True,
    "mistral-small-3.1": True,
    "mistral-medium": True,
    "qwen2.5vl": True,
    "qwen2.5-vl": True,
    "qwen-vl": True,
    "qwen3-vl": True,
    "minicpm-v": True,
    "moondream": True,
    "granite3.2-vision": True,
    "kimi-vl": True,
    "glm-4v": True,
    "glm-4.5v": True,
}


def supports_images(model: str) -> bool:
    """Whether the model can see images (from the table above; unknown models cannot)."""
    prefix = _longest_prefix(normalize_model_name(model), _VISION)
    return _VISION[prefix] if prefix else False


def image_token_formula(model: str, wire_api: str | None = None) -> str:
    """Which provider's published formula counts this model's image tokens."""
    claude = normalize_model_name(model).startswith("claude") or wire_api == "anthropic"
    return "anthropic" if claude else "openai"


def default_provider_for(model: str) -> str:
    """The built-in provider to use when the user names only a model."""
    return "anthropic" if model.strip().lower().startswith("claude") else "openai"
