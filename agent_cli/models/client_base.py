"""What the three streaming clients share: settings, the HTTP connection, retries, error mapping.

A subclass names its endpoint and headers and implements ``_attempt``: one request, yielding
deltas as they arrive and its output items plus ``Completed`` only after the terminal event (so
a retried attempt never yields an item twice). Raising ``TransientError`` from ``_attempt``
retries it.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from typing import Any, ClassVar

from agent_cli import __version__
from agent_cli.models.base import Prompt, StreamEvent
from agent_cli.models.error_mapping import ErrorContext, error_fields, error_for_stream_failure, map_exception, with_window
from agent_cli.models.errors import ModelError
from agent_cli.models.http_stream import EventStreamClient, ServerEvent
from agent_cli.models.retry import RetryPolicy, stream_with_retries
from agent_cli.models.stream_limits import StreamLimits, within_limits

USER_AGENT = f"agent-cli/{__version__}"


class StreamingClient:
    default_base_url: ClassVar[str]
    path: ClassVar[str]  # the endpoint, after the base URL

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
        self._http: EventStreamClient | None = None

    def stream(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        return stream_with_retries(lambda: self._guarded_attempt(prompt), self.retry)

    async def aclose(self) -> None:
        """Close the connection pool; the next ``stream`` opens a new one."""
        http, self._http = self._http, None
        if http is not None:
            await http.aclose()

    @property
    def url(self) -> str:
        return (self.base_url or self.default_base_url).rstrip("/")

    def _error_context(self) -> ErrorContext:
        return ErrorContext(self.provider, self.model, self.url, self.env_key)

    def headers(self) -> dict[str, str]:
        """What every request carries: authentication and the provider's own headers."""
        raise NotImplementedError

    def events(self, payload: dict[str, Any]) -> AsyncIterator[ServerEvent]:
        """POST ``payload`` to this client's endpoint; the answer's server-sent events."""
        if self._http is None:
            self._http = EventStreamClient(self.url, {"User-Agent": USER_AGENT, **self.headers()},
                                           connect_s=self.limits.connect_s, overall_s=self.timeout)
        return self._http.events(self.path, payload)

    def stream_failure(self, body: object) -> ModelError:
        """The error for a failure the server reported inside the stream (``body`` as sent)."""
        message, code, kind = error_fields(body)
        return with_window(error_for_stream_failure(message, self._error_context(), code=code, kind=kind), body)

    async def _guarded_attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        try:
            async for event in within_limits(self._attempt(prompt), self.limits):
                yield event
        except ModelError:
            raise
        except Exception as exc:  # HTTP and decoding errors never escape raw
            context = self._error_context()
            raise self.limits.connect_error(exc, context.base_url) or map_exception(exc, context) from exc

    def _attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError


def openai_headers(api_key: str) -> dict[str, str]:
    """Bearer authentication, plus the organization and project the OpenAI SDK reads from the
    environment (``OPENAI_ORG_ID``, ``OPENAI_PROJECT_ID``)."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    for header, variable in (("OpenAI-Organization", "OPENAI_ORG_ID"), ("OpenAI-Project", "OPENAI_PROJECT_ID")):
        if value := os.environ.get(variable):
            headers[header] = value
    return headers


def int_field(data: Any, *path: str) -> int:
    """A nested integer field, 0 when missing or null (servers vary in what they report)."""
    for key in path:
        if not isinstance(data, dict):
            return 0
        data = data.get(key)
    return data if isinstance(data, int) else 0
