"""POST a JSON request and read the server-sent events that answer it: the one HTTP path of
the three model clients.

Built on httpx2, the HTTP library the provider SDKs themselves use, and its SSE decoder; not on
the SDKs: importing ``openai`` costs about a second of start-up and ``anthropic`` more than two,
for typed models that the clients only turned back into dicts. The SDKs' conventions are kept:
the same headers, proxies from the environment, and error responses raised with
``status_code``, ``body`` and ``response`` (what ``error_mapping`` reads).
"""

from __future__ import annotations

import asyncio
import importlib
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from agent_cli.models.errors import ModelError

MAX_EVENT_BYTES = 64 * 1024 * 1024  # a finished response (echoed whole by some APIs) fits
MAX_ERROR_BODY_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class ServerEvent:
    """One server-sent event: its ``event:`` name and its parsed ``data:`` (None for ``[DONE]``)."""

    name: str
    data: dict[str, Any] | None


class HttpStatusError(Exception):
    """The server answered with an error status (or, for Anthropic, an ``error`` event)."""

    def __init__(self, status_code: int, body: object, response: Any, message: str) -> None:
        super().__init__(message)
        self.status_code = status_code
        self.body = body
        self.response = response
        self.message = message


class NotAStream(ModelError):
    """A 200 answer that is not an event stream (a server that ignored ``stream: true``)."""


async def import_http() -> Any:
    """httpx2, imported off the event loop the first time (it takes a tenth of a second)."""
    return await asyncio.to_thread(importlib.import_module, "httpx2")


class EventStreamClient:
    """A connection pool to one server, opened on the first request."""

    def __init__(self, base_url: str, headers: dict[str, str], *, connect_s: float, overall_s: float) -> None:
        self.base_url = base_url.rstrip("/")
        self.headers = headers
        self.connect_s = connect_s
        self.overall_s = overall_s
        self._client: Any = None
        self._httpx: Any = None  # the module, once imported

    async def events(self, path: str, payload: dict[str, Any]) -> AsyncIterator[ServerEvent]:
        """POST ``payload`` to ``path`` and yield the events of the streamed answer."""
        client = await self._http_client()
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "Accept": "text/event-stream"}
        async with client.stream("POST", self.base_url + path, content=body, headers=headers) as response:
            if response.status_code >= 300:  # redirects too: not followed, named (error_mapping)
                raise await _status_error(response)
            content_type = response.headers.get("content-type", "")
            if "text/event-stream" not in content_type:
                text = (await response.aread())[:300].decode("utf-8", "replace")
                raise NotAStream(
                    f"{self.base_url} answered with {content_type or 'no content type'} instead of an event "
                    f"stream: {' '.join(text.split()) or '(empty)'}"
                )
            async for sse in self._httpx.EventSource(response, max_event_size=MAX_EVENT_BYTES):
                if sse.event == "ping" or not sse.data:
                    continue
                if sse.data.startswith("[DONE]"):
                    yield ServerEvent(sse.event, None)
                    return
                data = json.loads(sse.data)
                if not isinstance(data, dict):
                    raise json.JSONDecodeError("an event that is not a JSON object", sse.data, 0)
                yield ServerEvent(sse.event, data)

    async def aclose(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def _http_client(self) -> Any:
        if self._client is None:
            self._httpx = http = await import_http()
            # Plain http (a local server) needs no TLS: not loading the CA bundle saves ~0.1 s.
            verify = urlsplit(self.base_url).scheme == "https"
            self._client = http.AsyncClient(
                headers=self.headers, timeout=http.Timeout(self.overall_s, connect=self.connect_s),
                verify=verify, follow_redirects=False,
            )
        return self._client


async def _status_error(response: Any) -> HttpStatusError:
    raw = b""
    async for chunk in response.aiter_bytes():
        raw += chunk
        if len(raw) > MAX_ERROR_BODY_BYTES:
            break
    text = raw[:MAX_ERROR_BODY_BYTES].decode("utf-8", "replace")
    try:
        body: object = json.loads(text)
    except ValueError:
        body = text
    return HttpStatusError(response.status_code, body, response, f"HTTP {response.status_code}")
