"""The models a provider serves, from its models endpoint (``GET {base}/models``), for ``/model``.

Every OpenAI-compatible server, OpenAI itself and Anthropic answer ``{"data": [{"id": ...}]}``.
A server that does not answer (or answers in another shape) gives an empty list: the caller
falls back on the model table and asks the user.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from agent_cli.models.discovery import import_http

LIST_TIMEOUT = 3.0
_cache: dict[str, list[str]] = {}


async def provider_models(
    base_url: str | None, api_key: str | None, wire_api: str, timeout: float = LIST_TIMEOUT
) -> list[str]:
    """The ids the server lists (cached per base URL for the process); [] when it does not say."""
    if not base_url:
        return []
    url = base_url.rstrip("/") + "/models"
    if url in _cache:
        return _cache[url]
    headers = (
        {"x-api-key": api_key, "anthropic-version": "2023-06-01"}
        if wire_api == "anthropic" and api_key
        else {"Authorization": f"Bearer {api_key}"}
        if api_key
        else {}
    )
    try:
        http = await import_http()
        verify = urlsplit(url).scheme == "https"
        async with http.AsyncClient(timeout=timeout, headers=headers, follow_redirects=False, verify=verify) as client:
            response = await client.get(url)
        models = model_ids(response.json()) if response.status_code == 200 else []
    except Exception:  # noqa: BLE001 - refused, timed out, not JSON: the server does not say
        models = []
    if models:
        _cache[url] = models
    return models


def model_ids(data: Any) -> list[str]:
    entries = data.get("data") if isinstance(data, dict) else None
    if not isinstance(entries, list):
        return []
    return sorted({str(entry["id"]) for entry in entries if isinstance(entry, dict) and entry.get("id")})
