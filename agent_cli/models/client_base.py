"""What the three SDK-backed clients share: settings, lazy SDK loading, retries, error mapping.

A subclass names its SDK module, builds the SDK client, and implements ``_attempt``: one
request, yielding deltas as they arrive and its output items plus ``Completed`` only after
the terminal event (so a retried attempt never yields an item twice). Raising
``TransientError`` from ``_attempt`` retries it.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import AsyncIterator
from types import ModuleType
from typing import Any, ClassVar

from agent_cli.models.base import Prompt, StreamEvent
from agent_cli.models.error_mapping import ErrorContext, map_exception
from agent_cli.models.errors import ModelError
from agent_cli.models.retry import RetryPolicy, stream_with_retries
from agent_cli.models.stream_limits import StreamLimits, within_limits


class SdkStreamingClient:
    sdk_module: ClassVar[str]
    default_base_url: ClassVar[str]

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
        self._sdk_client: Any = None

    def stream(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        return stream_with_retries(lambda: self._guarded_attempt(prompt), self.retry)

    async def aclose(self) -> None:
        """Close the SDK's connection pool; the next ``stream`` opens a new one."""
        sdk, self._sdk_client = self._sdk_client, None
        if sdk is not None:
            await sdk.close()

    def _error_context(self) -> ErrorContext:
        url = str(getattr(self._sdk_client, "base_url", "") or self.base_url or self.default_base_url)
        return ErrorContext(self.provider, self.model, url.rstrip("/"), self.env_key)

    async def _sdk(self) -> Any:
        if self._sdk_client is None:
            module = await _import_sdk(self.sdk_module)
            # Our own retry loop handles every retry, including streams cut mid-way.
            sdk = self._make_sdk_client(module)
            self._sdk_client = sdk.with_options(timeout=self.limits.http_timeout(module, self.timeout))
        return self._sdk_client

    def _make_sdk_client(self, module: ModuleType) -> Any:
        raise NotImplementedError

    async def _guarded_attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        try:
            sdk = await self._sdk()
            async for event in within_limits(self._attempt(sdk, prompt), self.limits):
                yield event
        except ModelError:
            raise
        except Exception as exc:  # SDK, HTTP and decoding errors never escape raw
            context = self._error_context()
            raise self.limits.connect_error(exc, context.base_url) or map_exception(exc, context) from exc

    def _attempt(self, sdk: Any, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        raise NotImplementedError


async def _import_sdk(name: str) -> ModuleType:
    """Import an SDK off the event loop: ``anthropic`` alone takes over a second."""
    try:
        return await asyncio.to_thread(importlib.import_module, name)
    except ImportError as exc:
        raise ModelError(f"the '{name}' package is not installed ({exc}); pip install {name}") from exc


def as_dict(obj: Any) -> dict[str, Any]:
    """An SDK event as a plain dict with exactly the fields the server sent (extras included)."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)
    if callable(to_dict):
        return to_dict(warnings=False)
    return obj.model_dump(exclude_unset=True)


def int_field(data: Any, *path: str) -> int:
    """A nested integer field, 0 when missing or null (servers vary in what they report)."""
    for key in path:
        if not isinstance(data, dict):
            return 0
        data = data.get(key)
    return data if isinstance(data, int) else 0
