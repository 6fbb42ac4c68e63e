"""What the three streaming clients share: settings, the SDK client, retries, error mapping.

A subclass names its SDK and implements ``_attempt``: one request, yielding deltas as they
arrive and its output items plus ``Completed`` only after the terminal event (so a retried
attempt never yields an item twice). Raising ``TransientError`` from ``_attempt`` retries it.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncGenerator, AsyncIterator
from typing import Any, ClassVar

from agent_cli import startup_gc
from agent_cli.models.base import Prompt, StreamEvent
from agent_cli.models.error_mapping import ErrorContext, map_exception, stream_failure_of
from agent_cli.models.errors import ModelError
from agent_cli.models.retry import RetryPolicy, stream_with_retries
from agent_cli.models.sdk_clients import Connection, as_dict, build_sdk_client, request_id
from agent_cli.models.stream_limits import StreamLimits, within_limits


class StreamingClient:
    default_base_url: ClassVar[str]
    sdk: ClassVar[str]  # "openai" or "anthropic"
    path: ClassVar[str]  # the endpoint, after the base URL (the SDK client rewrites it for a cloud)

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        provider: str,
        env_key: str | None = None,
        retry: RetryPolicy | None = None,
        max_output_tokens: int | None = None,
        reasoning_effort: str | None = None,
        timeout: float = 600,
        limits: StreamLimits | None = None,
        kind: str = "default",
        http_headers: dict[str, str] | None = None,
        query_params: dict[str, str] | None = None,
    ) -> None:
        self.provider = provider
        self.model = model
        self.api_key = api_key
        self.base_url = base_url
        self.env_key = env_key
        self.retry = retry or RetryPolicy()
        self.max_output_tokens = max_output_tokens
        self.reasoning_effort = reasoning_effort
        self.timeout = timeout  # the whole request
        self.limits = limits or StreamLimits()  # connect, first byte, idle (stream_limits.py)
        self.kind = kind  # which of the SDK's clients: default, azure, bedrock, vertex
        self.http_headers = dict(http_headers or {})
        self.query_params = dict(query_params or {})
        self._sdk_client: Any = None
        self.last_request_id: str | None = None

    def stream(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        return stream_with_retries(lambda: self._guarded_attempt(prompt), self.retry)

    async def aclose(self) -> None:
        """Close the connection pool; the next ``stream`` opens a new one."""
        sdk, self._sdk_client = self._sdk_client, None
        if sdk is not None:
            await sdk.close()

    @property
    def url(self) -> str:
        sdk_url = getattr(self._sdk_client, "base_url", None)
        return str(sdk_url or self.base_url or self.default_base_url).rstrip("/")

    def _error_context(self) -> ErrorContext:
        return ErrorContext(self.provider, self.model, self.url, self.env_key)

    async def sdk_client(self) -> Any:
        """The SDK client, made (and its SDK imported) with the first request."""
        if self._sdk_client is None:
            self._sdk_client = await build_sdk_client(
                Connection(
                    self.sdk,
                    self.kind,
                    self.api_key,
                    self.base_url,
                    self.timeout,
                    self.limits.connect_s,
                    self.http_headers,
                    self.query_params,
                )
            )
            startup_gc.resume()  # start-up is over: the first request follows
        return self._sdk_client

    async def events(self, params: dict[str, Any]) -> AsyncGenerator[dict[str, Any]]:
        """POST ``params`` through the SDK client and yield the streamed events as plain dicts.

        The SDK's generic request (``post`` with the SDK's own ``AsyncStream``) rather than
        ``responses.create`` / ``messages.stream()`` and their accumulators: the SDK still builds,
        authenticates and signs the request (Azure's deployment paths, Bedrock's SigV4, Vertex's
        token), decodes the stream (SSE or AWS event stream) and raises its typed errors, in-stream
        ones included; but the events stay the dicts the server sent. The resource modules and the
        typed events cost ~0.7 s on a first request (importing the streaming helpers, building
        pydantic models), and keep only the fields the SDK knows, while compatible servers put
        reasoning and errors in others.
        """
        sdk = await self.sdk_client()
        stream_class = sys.modules[self.sdk].AsyncStream
        stream = await sdk.post(self.path, cast_to=object, body=params, stream=True, stream_cls=stream_class[object])
        response = stream.response
        self.last_request_id = request_id(stream)
        try:
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type and "eventstream" not in content_type:  # Bedrock's is binary
                text = (await response.aread())[:300].decode("utf-8", "replace")
                raise ModelError(
                    f"{self.url} answered with {content_type or 'no content type'} instead of an "
                    f"event stream: {' '.join(text.split()) or '(empty)'}"
                )
            async for event in stream:
                yield event if isinstance(event, dict) else as_dict(event)
        finally:
            await stream.close()  # also when the consumer stops early: the connection closes now

    def stream_failure(self, body: object) -> ModelError:
        """The error for a failure the server reported inside the stream (``body`` as sent)."""
        return stream_failure_of(body, self._error_context())

    async def _guarded_attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        self.last_request_id = None
        try:
            await self.sdk_client()  # the SDK's import is not the server's silence: before the idle timer
            async for event in within_limits(self._attempt(prompt), self.limits):
                yield event
        except ModelError as exc:
            raise exc.with_request_id(self.last_request_id)
        except Exception as exc:  # SDK, HTTP and decoding errors never escape raw
            context = self._error_context()
            error = self.limits.connect_error(exc, context.base_url) or map_exception(exc, context)
            raise error.with_request_id(request_id(exc) or self.last_request_id) from exc

    def _attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError


def int_field(data: Any, *path: str) -> int:
    """A nested integer field, 0 when missing or null (servers vary in what they report)."""
    for key in path:
        if not isinstance(data, dict):
            return 0
        data = data.get(key)
    return data if isinstance(data, int) else 0
