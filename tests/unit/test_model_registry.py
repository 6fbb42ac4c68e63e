"""Providers, keys, base URLs and lazy SDK loading."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.models.anthropic_messages import AnthropicMessagesClient
from agent_cli.models.errors import ModelError
from agent_cli.models.openai_chat import OpenAIChatClient
from agent_cli.models.openai_responses import OpenAIResponsesClient
from agent_cli.models.registry import (
    BUILTIN_PROVIDERS,
    NO_KEY_PLACEHOLDER,
    ProviderConfig,
    create_client,
    resolve_api_key,
    resolve_base_url,
)
from agent_cli.models.retry import RetryPolicy

ROOT = Path(__file__).resolve().parents[2]


def test_builtin_providers():
    expected = {
        "openai": ("responses", "OPENAI_API_KEY", None, True),
        "openai-chat": ("chat", "OPENAI_API_KEY", None, True),
        "anthropic": ("anthropic", "ANTHROPIC_API_KEY", None, True),
        "ollama": ("chat", None, "http://localhost:11434/v1", False),
        "lmstudio": ("chat", None, "http://localhost:1234/v1", False),
        "openrouter": ("chat", "OPENROUTER_API_KEY", "https://openrouter.ai/api/v1", True),
        "azure": ("responses", "AZURE_OPENAI_API_KEY", None, True),
        "bedrock": ("anthropic", None, None, False),
        "vertex": ("anthropic", None, None, False),
    }
    got = {pid: (p.wire_api, p.env_key, p.base_url, p.requires_key) for pid, p in BUILTIN_PROVIDERS.items()}
    assert got == expected
    assert all(pid == p.id and p.name for pid, p in BUILTIN_PROVIDERS.items())


def test_resolve_api_key(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "  sk-123 ")
    assert resolve_api_key(BUILTIN_PROVIDERS["openai"]) == "sk-123"
    monkeypatch.setenv("OPENAI_API_KEY", "")
    assert resolve_api_key(BUILTIN_PROVIDERS["openai"]) is None
    assert resolve_api_key(BUILTIN_PROVIDERS["ollama"]) is None


def test_base_url_precedence(monkeypatch):
    openai = BUILTIN_PROVIDERS["openai"]
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    assert resolve_base_url(openai) is None  # the SDK's default
    monkeypatch.setenv("OPENAI_BASE_URL", "http://proxy.local/v1")
    assert resolve_base_url(openai) == "http://proxy.local/v1"
    assert resolve_base_url(openai, "http://explicit/v1") == "http://explicit/v1"
    assert resolve_base_url(BUILTIN_PROVIDERS["ollama"]) == "http://localhost:11434/v1"
    assert resolve_base_url(BUILTIN_PROVIDERS["ollama"], "http://gpu-box:11434/v1") == "http://gpu-box:11434/v1"


def test_create_client_picks_the_wire_and_passes_settings(monkeypatch):
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://anthropic.local")
    policy = RetryPolicy(max_attempts=2)
    client = create_client(
        BUILTIN_PROVIDERS["anthropic"],
        "claude-opus-4-6",
        api_key="k",
        retry=policy,
        max_output_tokens=100,
        reasoning_effort="low",
        timeout=5,
    )
    assert isinstance(client, AnthropicMessagesClient)
    assert (client.provider, client.model, client.base_url, client.retry) == (
        "anthropic",
        "claude-opus-4-6",
        "http://anthropic.local",
        policy,
    )
    assert (client.max_output_tokens, client.reasoning_effort, client.timeout) == (100, "low", 5)
    assert isinstance(create_client(BUILTIN_PROVIDERS["openai"], "gpt-5", api_key="k"), OpenAIResponsesClient)
    assert isinstance(create_client(BUILTIN_PROVIDERS["openrouter"], "x", api_key="k"), OpenAIChatClient)


def test_missing_key_is_a_clear_error_unless_not_required():
    with pytest.raises(ModelError, match="provider openai needs an API key: set OPENAI_API_KEY"):
        create_client(BUILTIN_PROVIDERS["openai"], "gpt-5", api_key=None)
    local = create_client(BUILTIN_PROVIDERS["lmstudio"], "qwen3", api_key=None)
    assert local.api_key == NO_KEY_PLACEHOLDER


def test_custom_provider_with_unknown_wire_is_rejected():
    bad = ProviderConfig("mine", "grpc", base_url="http://x")  # type: ignore[arg-type]
    with pytest.raises(ModelError, match="unknown wire_api"):
        create_client(bad, "m", api_key="k")


def test_importing_the_clients_loads_no_sdk():
    code = (
        "import agent_cli.models.registry, agent_cli.models.openai_responses, "
        "agent_cli.models.openai_chat, agent_cli.models.anthropic_messages, agent_cli.models.model_info; "
        "from agent_cli.models.registry import BUILTIN_PROVIDERS, create_client; "
        "create_client(BUILTIN_PROVIDERS['anthropic'], 'claude-opus-4-6', api_key='k'); "
        "import sys; loaded = [m for m in ('openai', 'anthropic', 'httpx', 'httpx2') if m in sys.modules]; "
        "assert not loaded, loaded"
    )
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr


def test_status_names_where_a_cloud_provider_sends(monkeypatch):
    from agent_cli.models.registry import provider_location

    for name in (
        "AWS_REGION",
        "AWS_DEFAULT_REGION",
        "ANTHROPIC_VERTEX_PROJECT_ID",
        "GOOGLE_CLOUD_PROJECT",
        "CLOUD_ML_REGION",
        "OPENAI_API_VERSION",
    ):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AWS_REGION", "eu-west-1")
    monkeypatch.setenv("ANTHROPIC_VERTEX_PROJECT_ID", "proj")
    monkeypatch.setenv("AZURE_OPENAI_ENDPOINT", "https://team.openai.azure.com")
    assert provider_location(BUILTIN_PROVIDERS["bedrock"]) == "AWS region eu-west-1"
    assert provider_location(BUILTIN_PROVIDERS["vertex"]) == "Google Cloud project proj, region global"
    assert provider_location(BUILTIN_PROVIDERS["azure"]) == "https://team.openai.azure.com, api-version default"
