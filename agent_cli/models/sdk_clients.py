"""The official SDK clients the model clients send their requests through.

The SDK of the wire in use is imported with the first request, in a thread: ``openai`` takes
about half a second to import and ``anthropic`` one to two and a half, and nothing else in
``agent exec`` needs them. Each SDK client is built here with our settings: no SDK retries (ours
are visible and cover streams cut mid-way), our connect and overall limits, no TLS set-up for
plain http, the provider's extra headers and query parameters.
"""

from __future__ import annotations

import asyncio
import importlib
import os
import platform
import sys
import threading
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any
from urllib.parse import urlsplit

from agent_cli import __version__
from agent_cli.models.errors import ModelError

AZURE_API_VERSION = "2025-04-01-preview"  # when neither the config nor OPENAI_API_VERSION names one
# The extras a cloud provider needs beyond the SDK, and the pip extra that brings them.
CLOUD_EXTRAS = {"bedrock": ("boto3", "bedrock"), "vertex": ("google.auth", "vertex")}


@dataclass(frozen=True)
class Connection:
    """Where and how one client connects: what its SDK client is built from."""

    sdk: str  # "openai" or "anthropic"
    kind: str  # "default", "azure", "bedrock" or "vertex": which of the SDK's clients
    api_key: str
    base_url: str | None
    timeout: float
    connect_s: float
    http_headers: dict[str, str] = field(default_factory=dict)
    query_params: dict[str, str] = field(default_factory=dict)


def start_import(name: str) -> None:
    """Begin importing an SDK now, in a daemon thread, for a run that will send a request: what
    start-up still does meanwhile (waiting on git, reading files) overlaps with it, and the first
    request's ``import_sdk`` waits only for the rest (the import system's lock)."""
    if name not in sys.modules:
        threading.Thread(target=_import_quietly, args=(name,), name=f"import-{name}", daemon=True).start()


def _import_quietly(name: str) -> None:
    if name == "openai":
        # The openai SDK's first request reads platform.platform() for its headers, which runs
        # `uname -p` (cached after): run it here, where its wait overlaps start-up, not after.
        platform.platform()
    for module in (name, "httpcore2"):  # the SDK, then the connection library its client will load
        try:
            importlib.import_module(module)
        except Exception:  # noqa: BLE001 - the first request imports it again and says what is wrong
            return


async def import_sdk(name: str) -> ModuleType:
    """Import an SDK (or a cloud extra) off the event loop; a missing one is a clear error."""
    try:
        return await asyncio.to_thread(importlib.import_module, name)
    except ImportError as exc:
        extra = next((e for module, e in CLOUD_EXTRAS.values() if name == module), None)
        hint = f"pip install 'agent-cli[{extra}]'" if extra else f"pip install {name}"
        raise ModelError(f"the '{name}' package is not installed ({exc}): {hint}") from exc


async def build_sdk_client(conn: Connection) -> Any:
    """The SDK client for ``conn``; cloud clients resolve their credentials first (in a thread:
    the AWS and Google libraries read files and may ask a metadata server)."""
    if conn.kind in CLOUD_EXTRAS:
        await import_sdk(CLOUD_EXTRAS[conn.kind][0])
    module = await import_sdk(conn.sdk)
    # In a thread too: the HTTP client's transport imports its connection library (~0.1 s).
    return await asyncio.to_thread(_cloud_client if conn.kind in ("bedrock", "vertex") else _make, module, conn)


def _common(module: ModuleType, conn: Connection, base_url: str | None) -> dict[str, Any]:
    http = importlib.import_module("httpx2")  # loaded by the SDK already
    # Plain http (a local server) needs no TLS: not loading the CA bundle saves ~0.1 s.
    verify = urlsplit(base_url or "https://").scheme != "http"
    timeout = http.Timeout(conn.timeout, connect=conn.connect_s)
    return {
        "max_retries": 0,  # retries are ours: visible, and they cover a stream cut mid-way
        "timeout": timeout,
        "default_headers": {"User-Agent": _user_agent(), **conn.http_headers},
        "default_query": dict(conn.query_params) or None,
        # Redirects are not followed: the key would go wherever they point (error_mapping names them).
        "http_client": module.DefaultAsyncHttpxClient(verify=verify, timeout=timeout, follow_redirects=False),
    }


def _make(module: ModuleType, conn: Connection) -> Any:
    if conn.kind == "azure":
        return _azure_client(module, conn)
    common = _common(module, conn, conn.base_url)
    if conn.sdk == "anthropic":
        return module.AsyncAnthropic(api_key=conn.api_key, base_url=conn.base_url, **common)
    return module.AsyncOpenAI(api_key=conn.api_key, base_url=conn.base_url, **common)


def _azure_client(module: ModuleType, conn: Connection) -> Any:
    endpoint = conn.base_url or os.environ.get("AZURE_OPENAI_ENDPOINT", "").strip()
    if not endpoint:
        raise ModelError("provider azure needs an endpoint: set AZURE_OPENAI_ENDPOINT or base_url")
    query = dict(conn.query_params)
    version = query.pop("api-version", None) or os.environ.get("OPENAI_API_VERSION") or AZURE_API_VERSION
    common = _common(module, replace_query(conn, query), endpoint)
    token = os.environ.get("AZURE_OPENAI_AD_TOKEN", "").strip()  # Entra ID, instead of a key
    credentials = {"azure_ad_token": token} if token and not conn.api_key else {"api_key": conn.api_key}
    return module.AsyncAzureOpenAI(azure_endpoint=endpoint, api_version=version, **credentials, **common)


def replace_query(conn: Connection, query: dict[str, str]) -> Connection:
    return Connection(
        conn.sdk, conn.kind, conn.api_key, conn.base_url, conn.timeout, conn.connect_s, conn.http_headers, query
    )


def _cloud_client(module: ModuleType, conn: Connection) -> Any:
    if conn.kind == "bedrock":
        return _bedrock_client(module, conn)
    return _vertex_client(module, conn)


def _bedrock_client(module: ModuleType, conn: Connection) -> Any:
    import boto3

    session = boto3.Session(profile_name=os.environ.get("AWS_PROFILE") or None)
    if session.get_credentials() is None:
        raise ModelError(
            "provider bedrock needs AWS credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, "
            "AWS_PROFILE, or sign in with `aws sso login`"
        )
    region = session.region_name or os.environ.get("AWS_REGION") or os.environ.get("AWS_DEFAULT_REGION")
    if not region:
        raise ModelError("provider bedrock needs an AWS region: set AWS_REGION")
    base_url = conn.base_url or os.environ.get("ANTHROPIC_BEDROCK_BASE_URL") or None
    return module.AsyncAnthropicBedrock(
        aws_region=region,
        aws_profile=os.environ.get("AWS_PROFILE") or None,
        base_url=base_url,
        **_common(module, conn, base_url or "https://"),
    )


def _vertex_client(module: ModuleType, conn: Connection) -> Any:
    import google.auth
    from google.auth.exceptions import DefaultCredentialsError

    try:
        credentials, project = google.auth.default(scopes=["https://www.googleapis.com/auth/cloud-platform"])
    except DefaultCredentialsError as exc:
        raise ModelError(
            "provider vertex needs Google application-default credentials: run "
            "`gcloud auth application-default login` or set GOOGLE_APPLICATION_CREDENTIALS"
        ) from exc
    project = os.environ.get("ANTHROPIC_VERTEX_PROJECT_ID") or os.environ.get("GOOGLE_CLOUD_PROJECT") or project
    if not project:
        raise ModelError("provider vertex needs a Google Cloud project: set ANTHROPIC_VERTEX_PROJECT_ID")
    region = os.environ.get("CLOUD_ML_REGION") or "global"
    base_url = conn.base_url or os.environ.get("ANTHROPIC_VERTEX_BASE_URL") or None
    return module.AsyncAnthropicVertex(
        region=region,
        project_id=project,
        credentials=credentials,
        base_url=base_url,
        **_common(module, conn, base_url or "https://"),
    )


def _user_agent() -> str:
    return f"agent-cli/{__version__}"


def request_id(obj: Any) -> str | None:
    """The provider's id of a request, from an SDK error or raw response."""
    value = getattr(obj, "request_id", None)
    if value is None:
        headers = getattr(getattr(obj, "response", None), "headers", None) or {}
        value = headers.get("x-request-id") or headers.get("request-id")
    return value if isinstance(value, str) and value else None


def as_dict(obj: Any) -> dict[str, Any]:
    """An SDK event as a plain dict with exactly the fields the server sent (extras included), so
    the fields compatible servers add (``reasoning_content``, list-typed ``content``) survive."""
    if isinstance(obj, dict):
        return obj
    to_dict = getattr(obj, "to_dict", None)  # the SDK model's method: a plain dict
    if to_dict is not None:
        return to_dict(warnings=False)
    return obj.model_dump(exclude_unset=True)
