"""Built-in providers and the one function that turns a provider and a model into a client.

Importing this module loads no HTTP library; the client modules are imported when a client is made.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Literal

from agent_cli.auth.keys import stored_key
from agent_cli.models.anthropic_messages import AnthropicMessagesClient
from agent_cli.models.base import ModelClient
from agent_cli.models.chat_quirks import ChatQuirks, quirks_for
from agent_cli.models.errors import ModelError
from agent_cli.models.openai_chat import OpenAIChatClient
from agent_cli.models.openai_responses import OpenAIResponsesClient
from agent_cli.models.retry import RetryPolicy
from agent_cli.models.stream_limits import StreamLimits

WireApi = Literal["responses", "chat", "anthropic"]
SDK_OF_WIRE = {"responses": "openai", "chat": "openai", "anthropic": "anthropic"}  # imported with the first request
# Local servers ignore the key; proxies in front of them may still want an Authorization header.
NO_KEY_PLACEHOLDER = "not-needed"


@dataclass(frozen=True)
class ProviderConfig:
    id: str
    wire_api: WireApi
    base_url: str | None = None
    env_key: str | None = None
    base_url_env: str | None = None
    requires_key: bool = True
    name: str = ""
    kind: str = "default"  # which of the SDK's clients: default, azure, bedrock, vertex
    http_headers: dict[str, str] = field(default_factory=dict, hash=False)  # sent with every request
    query_params: dict[str, str] = field(default_factory=dict, hash=False)  # added to every request's URL


BUILTIN_PROVIDERS: dict[str, ProviderConfig] = {
    p.id: p
    for p in (
        ProviderConfig("openai", "responses", env_key="OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL", name="OpenAI"),
        ProviderConfig(
            "openai-chat",
            "chat",
            env_key="OPENAI_API_KEY",
            base_url_env="OPENAI_BASE_URL",
            name="OpenAI (Chat Completions)",
        ),
        ProviderConfig(
            "anthropic", "anthropic", env_key="ANTHROPIC_API_KEY", base_url_env="ANTHROPIC_BASE_URL", name="Anthropic"
        ),
        ProviderConfig("ollama", "chat", base_url="http://localhost:11434/v1", requires_key=False, name="Ollama"),
        ProviderConfig("lmstudio", "chat", base_url="http://localhost:1234/v1", requires_key=False, name="LM Studio"),
        ProviderConfig(
            "openrouter",
            "chat",
            base_url="https://openrouter.ai/api/v1",
            env_key="OPENROUTER_API_KEY",
            name="OpenRouter",
        ),
        # The clouds, through the SDKs' own clients (models/sdk_clients.py). Azure takes a key or
        # an Entra ID token (AZURE_OPENAI_AD_TOKEN); Bedrock and Vertex their platform's credentials.
        ProviderConfig(
            "azure",
            "responses",
            env_key="AZURE_OPENAI_API_KEY",
            base_url_env="AZURE_OPENAI_ENDPOINT",
            name="Azure OpenAI",
            kind="azure",
        ),
        ProviderConfig("bedrock", "anthropic", requires_key=False, name="Amazon Bedrock", kind="bedrock"),
        ProviderConfig("vertex", "anthropic", requires_key=False, name="Google Vertex AI", kind="vertex"),
    )
}


# The Codex SDKs hand `codex exec` its key in CODEX_API_KEY; scripts written for Codex work here too.
KEY_FALLBACKS = {"OPENAI_API_KEY": "CODEX_API_KEY"}


def resolve_api_key(provider: ProviderConfig) -> str | None:
    """The provider's key from its environment variable, else the one `agent login` stored; None
    when neither is there."""
    if not provider.env_key:
        return None
    names = (provider.env_key, KEY_FALLBACKS.get(provider.env_key, ""))
    from_env = next((value for name in names if name and (value := os.environ.get(name, "").strip())), None)
    return from_env or stored_key(provider.env_key)


def uses_entra_token(provider: ProviderConfig) -> bool:
    """Azure without a key: an Entra ID token from the environment authenticates instead."""
    return provider.kind == "azure" and bool(os.environ.get("AZURE_OPENAI_AD_TOKEN", "").strip())


def missing_key(provider: ProviderConfig) -> str | None:
    """Why ``provider`` cannot be used for lack of a key; None when it has what it needs."""
    if not provider.requires_key or not provider.env_key or resolve_api_key(provider) or uses_entra_token(provider):
        return None
    if provider.kind == "azure":
        return f"{provider.env_key} (or AZURE_OPENAI_AD_TOKEN for Entra ID) is not set (needed by provider 'azure')."
    return (
        f"{provider.env_key} is not set (needed by provider '{provider.id}'). Run `agent` in a terminal to set "
        f"up a provider, store a key with `agent login`, export it, or use a local OpenAI-compatible server: "
        f"--provider ollama, or OPENAI_BASE_URL=http://HOST:PORT/v1 with --provider openai-chat."
    )


def resolve_base_url(provider: ProviderConfig, base_url: str | None = None) -> str | None:
    """Explicit argument, else the provider's own URL, else its env var; None means the client's default."""
    if base_url:
        return base_url
    if provider.base_url:
        return provider.base_url
    if provider.base_url_env:
        return os.environ.get(provider.base_url_env, "").strip() or None
    return None


def provider_location(provider: ProviderConfig) -> str | None:
    """Where requests go, as /status shows it (a cloud's region or project, an endpoint's URL)."""
    env = os.environ.get
    if provider.kind == "bedrock":
        return f"AWS region {env('AWS_REGION') or env('AWS_DEFAULT_REGION') or 'from the AWS config'}"
    if provider.kind == "vertex":
        project = env("ANTHROPIC_VERTEX_PROJECT_ID") or env("GOOGLE_CLOUD_PROJECT") or "from the credentials"
        return f"Google Cloud project {project}, region {env('CLOUD_ML_REGION') or 'global'}"
    base_url = resolve_base_url(provider)
    if provider.kind == "azure":
        version = provider.query_params.get("api-version") or env("OPENAI_API_VERSION") or "default"
        return f"{base_url or 'AZURE_OPENAI_ENDPOINT unset'}, api-version {version}"
    return base_url


def create_client(
    provider: ProviderConfig,
    model: str,
    *,
    api_key: str | None,
    base_url: str | None = None,
    retry: RetryPolicy | None = None,
    max_output_tokens: int | None = None,
    reasoning_effort: str | None = None,
    timeout: float = 600,
    limits: StreamLimits | None = None,
    known_quirks: dict[tuple[str, str], ChatQuirks] | None = None,
) -> ModelClient:
    """A streaming client for ``model`` at ``provider``. Raises ``ModelError`` if a key is missing.
    A chat client shares what its server rejected with the others made with the same ``known_quirks``."""
    if not api_key and uses_entra_token(provider):
        api_key = ""  # an Entra ID token instead of a key (sdk_clients)
    elif not api_key:
        if provider.requires_key:
            where = f"set {provider.env_key}" if provider.env_key else "configure an API key"
            if provider.kind == "azure":
                where += " (or AZURE_OPENAI_AD_TOKEN for Entra ID)"
            raise ModelError(f"provider {provider.id} needs an API key: {where}")
        api_key = NO_KEY_PLACEHOLDER
    client_class: type[OpenAIResponsesClient | OpenAIChatClient | AnthropicMessagesClient]
    if provider.wire_api == "responses":
        client_class = OpenAIResponsesClient
    elif provider.wire_api == "chat":
        client_class = OpenAIChatClient
    elif provider.wire_api == "anthropic":
        client_class = AnthropicMessagesClient
    else:
        raise ModelError(f"provider {provider.id} has unknown wire_api {provider.wire_api!r}")
    client = client_class(
        model,
        api_key=api_key,
        base_url=resolve_base_url(provider, base_url),
        provider=provider.id,
        env_key=provider.env_key,
        retry=retry,
        max_output_tokens=max_output_tokens,
        reasoning_effort=reasoning_effort,
        timeout=timeout,
        limits=limits,
        kind=provider.kind,
        http_headers=provider.http_headers,
        query_params=provider.query_params,
    )
    if isinstance(client, OpenAIChatClient) and known_quirks is not None:
        client.quirks = quirks_for(known_quirks, client.url, model)
    return client
