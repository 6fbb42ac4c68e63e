"""Turn whatever the SDK, the server or the network raised into one of our three errors.

The SDKs' exceptions are read by duck typing (``status_code``, ``body``, ``response.headers``,
the shape of ``openai.APIStatusError`` and ``anthropic.APIStatusError``; ``APITimeoutError`` and
``APIConnectionError`` by name), so this module imports no SDK.
"""

from __future__ import annotations

import json
import ssl
import sys
from dataclasses import dataclass
from typing import Any

from agent_cli.models.errors import ContextWindowExceeded, ModelError, TransientError
from agent_cli.models.overflow import window_from_error
from agent_cli.models.retry import retry_after_from_message, retry_after_seconds

# Lowercase fragments of every context-overflow message we know of.
_CONTEXT_PHRASES = (
    "context_length_exceeded",
    "maximum context length",  # OpenAI, vLLM, OpenRouter
    "context length",  # LM Studio, Mistral, Ollama
    "context window",  # OpenAI Responses ("exceeds the context window")
    "prompt is too long",  # Anthropic
    "prompt too long",  # Ollama
    "exceeds the available context size",  # llama.cpp
    "exceed_context_size",  # llama.cpp error type
    "input is too long",  # Bedrock
    "reduce the length of the messages",
    "exceeds the maximum number of tokens",  # Gemini
    "too many tokens in the prompt",
)
_CONTEXT_CODES = {"context_length_exceeded", "exceed_context_size_error", "request_too_large"}

# In-stream failures that retrying cannot fix; anything else reported mid-stream is retried.
_FATAL_STREAM_CODES = {
    "insufficient_quota",
    "invalid_prompt",
    "invalid_request_error",
    "invalid_api_key",
    "authentication_error",
    "permission_error",
    "billing_error",
    "not_found_error",
    "model_not_found",
}
_MAX_MESSAGE = 300


@dataclass(frozen=True, slots=True)
class ErrorContext:
    """What an error message needs to tell the user where to look."""

    provider: str
    model: str
    base_url: str
    env_key: str | None


def one_line(text: object, limit: int = _MAX_MESSAGE) -> str:
    flat = " ".join(str(text).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def is_context_overflow(message: str | None, code: str | None = None) -> bool:
    if code and code in _CONTEXT_CODES:
        return True
    lowered = (message or "").lower()
    return any(phrase in lowered for phrase in _CONTEXT_PHRASES)


def error_fields(body: object) -> tuple[str | None, str | None, str | None]:
    """(message, code, type) from an error body of any provider's shape."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return (body or None), None, None
    if not isinstance(body, dict):
        return None, None, None
    inner = body.get("error")
    err: dict[str, Any] = inner if isinstance(inner, dict) else body
    message = err.get("message") or body.get("message") or body.get("detail")
    if message is None and isinstance(inner, str):
        message = inner  # some compatible servers send {"error": "text"}
    code, kind = err.get("code"), err.get("type")
    return (
        str(message) if message is not None else None,
        str(code) if code is not None else None,
        str(kind) if kind is not None else None,
    )


def error_for_status(
    status: int, message: str | None, ctx: ErrorContext, *, code: str | None = None, headers: Any = None
) -> ModelError:
    """The error for an HTTP error response."""
    text = one_line(message or f"HTTP {status}")
    if 300 <= status < 400:  # redirects are not followed: the key would go wherever they point
        location = _header(headers, "location")
        target = f" to {one_line(location)}" if location else " (no Location given)"
        return ModelError(
            f"provider {ctx.provider} at {ctx.base_url} answered with a redirect (HTTP {status}){target}; "
            "the agent does not follow redirects (the API key would be sent there too): set the base URL "
            "to the address the server should be reached at"
        )
    if status in (401, 403):
        where = ctx.env_key or "the API key"
        return ModelError(f"authentication failed for provider {ctx.provider} (HTTP {status}): check {where} ({text})")
    if status == 404 or code == "model_not_found":
        return ModelError(f"model '{ctx.model}' was not found by provider {ctx.provider} at {ctx.base_url} ({text})")
    if status == 429 and code == "insufficient_quota":
        return ModelError(f"provider {ctx.provider} refused the request: {text}")
    transient = status in (408, 409, 429) or status >= 500
    if not transient and (status == 413 or is_context_overflow(message, code)):
        return ContextWindowExceeded(f"the prompt does not fit in {ctx.model}'s context window: {text}")
    should_retry = (headers or {}).get("x-should-retry")  # a server's explicit verdict wins
    if should_retry != "false" and (transient or should_retry == "true"):
        return TransientError(f"HTTP {status}: {text}", retry_after=retry_after_seconds(headers))
    return ModelError(f"provider {ctx.provider} rejected the request (HTTP {status}): {text}")


def _header(headers: Any, name: str) -> str | None:
    """A response header by name, whatever the case (a dict or the HTTP library's headers)."""
    if not headers:
        return None
    try:
        value = headers.get(name) or headers.get(name.title())
    except AttributeError:
        return None
    return str(value) if value else None


def error_for_stream_failure(
    message: str | None, ctx: ErrorContext, *, code: str | None = None, kind: str | None = None
) -> ModelError:
    """The error for a failure the server reported inside a 200 stream."""
    text = one_line(message or code or kind or "the server reported an error")
    if is_context_overflow(message, code) or is_context_overflow(None, kind):
        return ContextWindowExceeded(f"the prompt does not fit in {ctx.model}'s context window: {text}")
    if code in _FATAL_STREAM_CODES or kind in _FATAL_STREAM_CODES:
        return ModelError(f"provider {ctx.provider} failed the request: {text}")
    return TransientError(f"stream failed: {text}", retry_after=retry_after_from_message(text))


def _transport_error_types() -> tuple[type[BaseException], ...]:
    """Network failure types of the HTTP stack in use (never imports anything)."""
    types: list[type[BaseException]] = [ConnectionError, TimeoutError, ssl.SSLError]
    httpx2 = sys.modules.get("httpx2")
    if httpx2 is not None:
        types.append(httpx2.TransportError)
    anyio = sys.modules.get("anyio")
    if anyio is not None:
        types += [anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError]
    return tuple(types)


def map_exception(exc: BaseException, ctx: ErrorContext) -> ModelError:
    """Any exception raised while streaming, as a ``ModelError`` (or subclass)."""
    if isinstance(exc, ModelError):
        return exc
    status = getattr(exc, "status_code", None)
    body = getattr(exc, "body", None)
    if isinstance(status, int) and 200 <= status < 300 and body is not None:
        # An error event inside a 200 stream (Anthropic's `event: error`): a stream failure.
        return stream_failure_of(body, ctx)
    if status is None and body is not None and hasattr(exc, "request"):
        # openai.APIError: an error object inside a streamed chunk (OpenRouter sends one next to
        # `choices`); the body is that error object.
        return stream_failure_of(body, ctx)
    if isinstance(status, int) and hasattr(exc, "response"):
        message, code, kind = error_fields(body)
        headers = getattr(getattr(exc, "response", None), "headers", None)
        error = error_for_status(status, message or getattr(exc, "message", None), ctx, code=code, headers=headers)
        return with_window(error, body)
    name = type(exc).__name__
    if name in ("ReadTimeout", "WriteTimeout", "PoolTimeout", "APITimeoutError"):
        return TransientError("the request timed out")
    if name == "APIConnectionError" and exc.__cause__ is not None:
        return map_exception(exc.__cause__, ctx)  # the transport's own error says more
    if name in ("ConnectError", "APIConnectionError"):
        detail = f": {one_line(exc, 120)}" if str(exc) else ""
        return TransientError(f"connection error talking to {ctx.base_url}{detail}")
    if isinstance(exc, _transport_error_types()):
        return TransientError(f"connection lost: {one_line(exc, 120) or name}")
    if isinstance(exc, json.JSONDecodeError):
        return TransientError("the server sent a malformed stream event")
    return ModelError(f"request to provider {ctx.provider} failed: {name}: {one_line(exc)}")


def stream_failure_of(body: object, ctx: ErrorContext) -> ModelError:
    """The error for a failure the server reported inside a 200 stream, ``body`` as sent."""
    message, code, kind = error_fields(body)
    if code is not None and code.isdigit() and 400 <= int(code) < 600:  # an HTTP status as the code
        return with_window(error_for_status(int(code), message, ctx), body)
    return with_window(error_for_stream_failure(message, ctx, code=code, kind=kind), body)


def with_window(error: ModelError, body: object) -> ModelError:
    """An overflow error learns the window the server named in its body, if it named one."""
    if isinstance(error, ContextWindowExceeded) and error.window is None:
        error.window = window_from_error(body)
    return error
