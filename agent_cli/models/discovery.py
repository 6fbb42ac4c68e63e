"""Asking an OpenAI-compatible server what context window it really serves.

The model table knows a model's trained window; a local server often runs it with far less
(llama.cpp's ``-c 8192``, Ollama's ``num_ctx``). Each server says so at its own endpoint:

- llama.cpp   ``GET /props``          ``default_generation_settings.n_ctx``
- Ollama      ``POST /api/show``      the model's ``*.context_length`` and any ``num_ctx``
                                     parameter (the smaller is what it serves)
- LM Studio   ``GET /api/v0/models``  ``loaded_context_length`` of the model
- vLLM        ``GET {base}/models``   ``max_model_len``
- OpenRouter  ``GET {base}/models``   ``context_length`` (``/api/v1/models``)

All probes run at once, each with a short timeout; a failure only means "unknown". Answers
are cached per base URL and model for the process and in ``$AGENT_HOME/cache/`` for a day.
The HTTP library is the SDKs' own (httpx2), imported only when probing.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from agent_cli.paths import open_private

PROBE_TIMEOUT = 2.0  # seconds per probe; the first request is sent meanwhile
CACHE_TTL = 24 * 3600
CACHE_FILE = "context_windows.json"
# Hosted APIs whose windows the model table already knows: no point probing them.
_SKIP_HOSTS = ("api.openai.com", "api.anthropic.com")


@dataclass(frozen=True, slots=True)
class DiscoveredWindow:
    tokens: int
    server: str  # "llama.cpp", "Ollama", "LM Studio", "vLLM", "OpenRouter"
    endpoint: str  # what answered, e.g. "GET /props"

    @property
    def source(self) -> str:
        return f"server: {self.server} {self.endpoint}"


_session_cache: dict[tuple[str, str], DiscoveredWindow | None] = {}


def should_probe(base_url: str | None) -> bool:
    if not base_url:
        return False
    host = urlsplit(base_url).hostname or ""
    return bool(host) and host not in _SKIP_HOSTS


async def discover_window(
    base_url: str,
    model: str,
    *,
    api_key: str | None = None,
    cache_dir: Path | None = None,
    timeout: float = PROBE_TIMEOUT,
) -> DiscoveredWindow | None:
    """The window ``base_url`` serves ``model`` with, or None when no server said."""
    key = (base_url.rstrip("/"), model)
    if key in _session_cache:
        return _session_cache[key]
    found = read_cache(cache_dir, key) if cache_dir else None
    if found is None:
        found = await _probe_all(key[0], model, api_key, timeout)
        if found is not None and cache_dir:
            write_cache(cache_dir, key, found)
    _session_cache[key] = found
    return found


def forget_session_cache() -> None:
    _session_cache.clear()


# --- probes -------------------------------------------------------------------------------------


async def import_http() -> Any:
    """httpx2, imported off the event loop the first time (it takes a tenth of a second)."""
    import importlib

    return await asyncio.to_thread(importlib.import_module, "httpx2")


async def _probe_all(base_url: str, model: str, api_key: str | None, timeout: float) -> DiscoveredWindow | None:
    try:
        http = await import_http()
    except ImportError:
        return None
    root = server_root(base_url)
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    probes = [  # in order of trust: a server's own runtime setting before a catalogue's figure
        ("llama.cpp", "GET", f"{root}/props", None, _llamacpp),
        ("Ollama", "POST", f"{root}/api/show", {"model": model, "name": model}, _ollama),
        ("LM Studio", "GET", f"{root}/api/v0/models", None, _lmstudio),
        ("models", "GET", f"{base_url}/models", None, _models_list),
    ]
    # Plain http (local servers) needs no TLS: skipping it saves loading the CA bundle (~0.1 s of
    # CPU, taken from the first request, which runs at the same time).
    verify = urlsplit(base_url).scheme == "https"
    async with http.AsyncClient(timeout=timeout, headers=headers, follow_redirects=False, verify=verify) as client:
        answers = await asyncio.gather(*(_probe(client, method, url, body) for _, method, url, body, _ in probes))
    for (server, method, url, _, parse), data in zip(probes, answers):
        if data is None:
            continue
        try:
            result = parse(data, model)
        except (TypeError, ValueError, AttributeError):  # a server that answers in another shape
            result = None
        if result is not None:
            tokens, name = result
            return DiscoveredWindow(tokens, name or server, f"{method} {urlsplit(url).path}")
    return None


async def _probe(client: Any, method: str, url: str, body: dict | None) -> Any:
    try:
        response = await client.request(method, url, json=body)
        if response.status_code != 200:
            return None
        return response.json()
    except Exception:  # refused, timed out, not JSON: this server does not answer here
        return None


def server_root(base_url: str) -> str:
    """``http://host:8080/v1`` -> ``http://host:8080`` (where llama.cpp, Ollama, LM Studio answer)."""
    url = base_url.rstrip("/")
    for suffix in ("/api/v1", "/v1"):
        if url.endswith(suffix):
            return url[: -len(suffix)]
    return url


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _llamacpp(data: Any, model: str) -> tuple[int, str] | None:
    settings = data.get("default_generation_settings") or {}
    tokens = _positive(settings.get("n_ctx")) or _positive(data.get("n_ctx"))
    return (tokens, "llama.cpp") if tokens else None


def _ollama(data: Any, model: str) -> tuple[int, str] | None:
    info = data.get("model_info") or {}
    trained = next((_positive(v) for k, v in info.items() if k.endswith(".context_length") and _positive(v)), None)
    num_ctx = None
    for line in str(data.get("parameters") or "").splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == "num_ctx" and parts[1].isdigit():
            num_ctx = _positive(int(parts[1]))
    candidates = [n for n in (trained, num_ctx) if n]
    return (min(candidates), "Ollama") if candidates else None


def _entry(data: Any, model: str) -> dict[str, Any] | None:
    """The model's entry in a ``{"data": [...]}`` list; the only entry when the ids differ."""
    entries = [e for e in data.get("data") or [] if isinstance(e, dict)]
    for entry in entries:
        if entry.get("id") == model:
            return entry
    return entries[0] if len(entries) == 1 else None


def _lmstudio(data: Any, model: str) -> tuple[int, str] | None:
    entry = _entry(data, model) or {}
    tokens = _positive(entry.get("loaded_context_length"))
    return (tokens, "LM Studio") if tokens else None


def _models_list(data: Any, model: str) -> tuple[int, str] | None:
    entry = _entry(data, model) or {}
    if tokens := _positive(entry.get("max_model_len")):
        return tokens, "vLLM"
    top = entry.get("top_provider") or {}
    if tokens := _positive(top.get("context_length")) or _positive(entry.get("context_length")):
        return tokens, "OpenRouter"
    return None


# --- the day-long cache on disk -----------------------------------------------------------------


def _cache_key(key: tuple[str, str]) -> str:
    return f"{key[0]} {key[1]}"


def _load(cache_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((cache_dir / CACHE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _fresh(entry: Any, now: float) -> bool:
    try:
        return now - float(entry["at"]) <= CACHE_TTL
    except (TypeError, KeyError, ValueError):
        return False


def read_cache(cache_dir: Path, key: tuple[str, str], now: float | None = None) -> DiscoveredWindow | None:
    entry = _load(cache_dir).get(_cache_key(key))
    if not isinstance(entry, dict) or not _fresh(entry, time.time() if now is None else now):
        return None
    try:
        return DiscoveredWindow(int(entry["tokens"]), str(entry["server"]), str(entry["endpoint"]))
    except (TypeError, KeyError, ValueError):
        return None


def write_cache(cache_dir: Path, key: tuple[str, str], found: DiscoveredWindow) -> None:
    now = time.time()
    data = {k: v for k, v in _load(cache_dir).items() if _fresh(v, now)}  # expired entries go
    data[_cache_key(key)] = {"tokens": found.tokens, "server": found.server, "endpoint": found.endpoint, "at": now}
    try:
        with open_private(cache_dir / CACHE_FILE, "w") as handle:
            json.dump(data, handle, indent=1)
    except OSError:  # a read-only home only costs the next session a probe
        pass
