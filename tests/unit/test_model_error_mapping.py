"""Every provider's errors, mapped to our three."""

from __future__ import annotations

import pytest

from agent_cli.models.error_mapping import (
    ErrorContext,
    error_fields,
    error_for_status,
    error_for_stream_failure,
    is_context_overflow,
    map_exception,
)
from agent_cli.models.errors import ContextWindowExceeded, ModelError, TransientError

CTX = ErrorContext("ollama", "qwen3:8b", "http://localhost:11434/v1", None)


@pytest.mark.parametrize(
    "message",
    [
        "This model's maximum context length is 8192 tokens. However, you requested 9000 tokens",  # OpenAI/vLLM
        "prompt is too long: 210000 tokens > 200000 maximum",  # Anthropic
        "the request exceeds the available context size, try increasing it",  # llama.cpp
        "Your input exceeds the context window of this model.",  # Responses
        "The number of tokens to keep from the initial prompt is greater than the context length",  # LM Studio
        "Input is too long for requested model.",  # Bedrock
    ],
)
def test_context_overflow_messages(message):
    assert is_context_overflow(message)
    assert isinstance(error_for_status(400, message, CTX), ContextWindowExceeded)


def test_context_overflow_by_code_and_not_by_accident():
    assert is_context_overflow("anything", "context_length_exceeded")
    assert not is_context_overflow("tools[0].name is invalid")
    # A rate limit mentioning tokens is a rate limit, not an overflow.
    assert isinstance(error_for_status(429, "Request too large: tokens per min", CTX), TransientError)


def test_status_mapping():
    auth = error_for_status(
        401, "bad key", ErrorContext("openai", "gpt-5", "https://api.openai.com/v1", "OPENAI_API_KEY")
    )
    assert type(auth) is ModelError
    assert str(auth).startswith("authentication failed for provider openai (HTTP 401): check OPENAI_API_KEY")
    assert "check the API key" in str(error_for_status(403, None, CTX))
    missing = error_for_status(404, "model 'qwen3:8b' not found", CTX)
    assert str(missing).startswith("model 'qwen3:8b' was not found by provider ollama at http://localhost:11434/v1")
    assert "was not found" in str(error_for_status(400, "nope", CTX, code="model_not_found"))
    assert type(error_for_status(429, "You exceeded your current quota", CTX, code="insufficient_quota")) is ModelError
    for status in (408, 409, 429, 500, 502, 503, 529):
        assert isinstance(error_for_status(status, "x", CTX), TransientError)
    assert type(error_for_status(500, "x", CTX, headers={"x-should-retry": "false"})) is ModelError
    assert isinstance(error_for_status(400, "x", CTX, headers={"x-should-retry": "true"}), TransientError)
    rate = error_for_status(429, "slow down", CTX, headers={"retry-after": "3"})
    assert rate.retry_after == 3.0
    assert isinstance(
        error_for_status(413, "Request exceeds the maximum allowed number of bytes.", CTX), ContextWindowExceeded
    )
    other = error_for_status(422, "line one\n  line two", CTX)
    assert type(other) is ModelError and str(other) == (
        "provider ollama rejected the request (HTTP 422): line one line two"
    )


def test_stream_failures():
    assert isinstance(error_for_stream_failure("Overloaded", CTX, kind="overloaded_error"), TransientError)
    slow = error_for_stream_failure("Rate limit reached. Please try again in 2s.", CTX, code="rate_limit_exceeded")
    assert isinstance(slow, TransientError) and slow.retry_after == 2.0
    assert isinstance(error_for_stream_failure("x", CTX, code="context_length_exceeded"), ContextWindowExceeded)
    assert type(error_for_stream_failure("no money", CTX, code="insufficient_quota")) is ModelError


@pytest.mark.parametrize(
    "body, expected",
    [
        ({"error": {"message": "m", "code": "c", "type": "t"}}, ("m", "c", "t")),
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            ("Overloaded", None, "overloaded_error"),
        ),
        ({"message": "flat", "code": 400}, ("flat", "400", None)),
        ({"error": "plain text error"}, ("plain text error", None, None)),
        ({"detail": "fastapi style"}, ("fastapi style", None, None)),
        ('{"error": {"message": "json text"}}', ("json text", None, None)),
        ("<html>bad gateway</html>", ("<html>bad gateway</html>", None, None)),
        (None, (None, None, None)),
    ],
)
def test_error_fields(body, expected):
    assert error_fields(body) == expected


def test_map_exception_for_non_sdk_failures():
    assert isinstance(map_exception(ConnectionResetError("reset by peer"), CTX), TransientError)
    assert isinstance(map_exception(TimeoutError(), CTX), TransientError)
    unknown = map_exception(ValueError("weird"), CTX)
    assert type(unknown) is ModelError and "ValueError: weird" in str(unknown)
    same = ContextWindowExceeded("x")
    assert map_exception(same, CTX) is same
