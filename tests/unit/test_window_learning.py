"""The window a server names in its overflow error, and calibration of our token estimates."""

from __future__ import annotations

import time

import pytest

from agent_cli.context.tokens import TokenCounter
from agent_cli.models.discovery import CACHE_FILE, CACHE_TTL, DiscoveredWindow, read_cache, write_cache
from agent_cli.models.overflow import window_from_error


@pytest.mark.parametrize(
    "body, window",
    [
        (
            {
                "error": {
                    "code": 400,
                    "message": "the request exceeds the available context size, try increasing it",
                    "type": "exceed_context_size_error",
                    "n_prompt_tokens": 9120,
                    "n_ctx": 8192,
                }
            },
            8192,
        ),  # llama.cpp
        (
            {
                "error": {
                    "message": "This model's maximum context length is 32768 tokens. However, you requested 40000 "
                    "tokens (39000 in the messages, 1000 in the completion).",
                    "type": "BadRequestError",
                    "code": 400,
                }
            },
            32768,
        ),  # vLLM
        (
            {
                "type": "error",
                "error": {
                    "type": "invalid_request_error",
                    "message": "prompt is too long: 210000 tokens > 200000 maximum",
                },
            },
            200000,
        ),  # Anthropic
        (
            '{"error": "Trying to keep the first 9000 tokens when context the overflows. However, the model is loaded '
            'with context length of 4096 tokens"}',
            4096,
        ),  # LM Studio
        ({"error": {"message": "prompt too long"}}, None),
        ("not json at all", None),
        (None, None),
    ],
)
def test_window_from_error_bodies(body, window):
    assert window_from_error(body) == window


def test_calibration_follows_the_servers_tokenizer():
    counter = TokenCounter(None)  # bytes/4
    assert counter.accuracy == "estimated" and counter.calibrated(1000) == 1000
    counter.observe(2500, 1000)
    counter.observe(2400, 1000)
    assert counter.calibrated(1000) == pytest.approx(2450, rel=0.01)
    assert counter.uncalibrated(2450) == pytest.approx(1000, rel=0.01)
    assert counter.accuracy.startswith("calibrated ×2.45")


def test_exact_counts_are_not_calibrated():
    counter = TokenCounter("o200k_base")
    if not counter.load():
        pytest.skip(counter.unavailable_reason or "no tokenizer")
    counter.observe(3000, 1000)
    assert counter.accuracy == "exact" and counter.calibrated(1000) == 1000


def test_discovery_cache_lasts_a_day_is_private_and_survives_a_corrupt_file(tmp_path):
    key = ("http://gpu-box:8080/v1", "qwen3:8b")
    found = DiscoveredWindow(8192, "llama.cpp", "GET /props")
    write_cache(tmp_path, key, found)
    assert read_cache(tmp_path, key) == found and read_cache(tmp_path, (key[0], "other")) is None
    assert read_cache(tmp_path, key, now=time.time() + CACHE_TTL + 1) is None
    assert (tmp_path / CACHE_FILE).stat().st_mode & 0o777 == 0o600
    (tmp_path / CACHE_FILE).write_text("{not json")
    assert read_cache(tmp_path, key) is None
    write_cache(tmp_path, key, found)
    assert read_cache(tmp_path, key) == found
