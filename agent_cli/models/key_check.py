"""One cheap request to tell whether a provider and its key answer: ``GET {base}/models`` with the key
(no tokens spent), and the same against the usual ports of local servers. Failures come back
as one plain sentence for the user (the key refused, nothing listening, no answer in time)."""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass
from urllib.parse import urlsplit

from agent_cli.models.discovery import import_http
from agent_cli.models.model_list import model_ids

CHECK_TIMEOUT = 10.0
PROBE_TIMEOUT = 0.6  # a local server answers at once; the set-up screen must not wait
OPENAI_URL = "https://api.openai.com/v1"
ANTHROPIC_URL = "https://api.anthropic.com"


@dataclass(frozen=True)
class LocalServer:
    id: str  # the provider id the set-up saves
    name: str
    base_url: str


LOCAL_SERVERS = (
    LocalServer("ollama", "Ollama", "http://localhost:11434/v1"),
    LocalServer("lmstudio", "LM Studio", "http://localhost:1234/v1"),
    LocalServer("llamacpp", "llama.cpp", "http://localhost:8080/v1"),
    LocalServer("vllm", "vLLM", "http://localhost:8000/v1"),
)


@dataclass(frozen=True)
class Check:
    ok: bool
    message: str  # what failed, or what answered
    models: tuple[str, ...] = ()
    seconds: float = 0.0
    status: int | None = None


def models_url(base_url: str, wire_api: str) -> str:
    """Anthropic's base URL has no /v1 (its SDK adds it); the OpenAI ones do."""
    base = base_url.rstrip("/")
    return f"{base}/v1/models" if wire_api == "anthropic" and not base.endswith("/v1") else f"{base}/models"


async def check_models(
    base_url: str, api_key: str | None, wire_api: str = "chat", timeout: float = CHECK_TIMEOUT
) -> Check:
    """List the server's models with ``api_key``: the key and the URL both work when it answers 200."""
    url = models_url(base_url, wire_api)
    if wire_api == "anthropic":
        headers = {"x-api-key": api_key or "", "anthropic-version": "2023-06-01"}
    else:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    started = time.monotonic()
    try:
        http = await import_http()
        verify = urlsplit(url).scheme == "https"
        async with http.AsyncClient(timeout=timeout, headers=headers, follow_redirects=False, verify=verify) as client:
            response = await client.get(url)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a sentence
        return Check(False, failure_text(url, exc, timeout), seconds=time.monotonic() - started)
    seconds = time.monotonic() - started
    status = response.status_code
    if status in (401, 403):
        detail = server_message(response)
        return Check(False, f"the key was refused ({status}{': ' + detail if detail else ''})", (), seconds, status)
    if status != 200:
        detail = server_message(response)
        return Check(False, f"{url} answered {status}{': ' + detail if detail else ''}", (), seconds, status)
    try:
        models = tuple(model_ids(response.json()))
    except ValueError:
        return Check(False, f"{url} answered, but not with JSON: is it an OpenAI-compatible server?", (), seconds, 200)
    return Check(True, f"{url} answered in {seconds:.2f} s ({len(models)} models)", models, seconds, 200)


def failure_text(url: str, exc: Exception, timeout: float) -> str:
    name = type(exc).__name__
    if "Timeout" in name:
        return f"no answer from {url} within {timeout:.0f} s"
    if "Connect" in name:
        return f"nothing answered at {url} (connection refused or host unknown)"
    return f"the request to {url} failed: {name}: {exc}"


def server_message(response) -> str:
    try:
        data = response.json()
    except ValueError:
        return response.text[:200].strip()
    error = data.get("error") if isinstance(data, dict) else None
    if isinstance(error, dict):
        return str(error.get("message") or "")[:200]
    return str(error or "")[:200]


async def find_local_servers(
    servers: tuple[LocalServer, ...] = LOCAL_SERVERS, timeout: float = PROBE_TIMEOUT
) -> list[tuple[LocalServer, Check]]:
    """The servers that answer their models list, probed at once."""
    checks = await asyncio.gather(*(check_models(server.base_url, None, "chat", timeout) for server in servers))
    return [(server, check) for server, check in zip(servers, checks, strict=True) if check.ok]
