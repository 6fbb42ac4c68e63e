"""Codex's config shapes that its SDKs pass to `codex exec --config`, and the price table."""

from __future__ import annotations

import pytest

from agent_cli.config import ConfigError, load_config
from agent_cli.models.base import Usage
from agent_cli.models.pricing import Price, price_for
from agent_cli.models.registry import resolve_api_key


def test_codex_sandbox_table_sets_network_and_roots(tmp_path):
    config = load_config(
        tmp_path, ["sandbox_workspace_write.network_access=true", 'sandbox_workspace_write.writable_roots=["extra"]']
    )
    assert config.network_access is True
    assert config.writable_roots == ((tmp_path / "extra").resolve(),)
    assert not any("sandbox_workspace_write" in warning for warning in config.warnings)


def test_codex_sandbox_table_checks_its_types(tmp_path):
    with pytest.raises(ConfigError, match="sandbox_workspace_write.network_access"):
        load_config(tmp_path, ['sandbox_workspace_write.network_access="yes"'])


def test_openai_base_url_points_the_openai_providers(tmp_path):
    config = load_config(tmp_path, ['openai_base_url="http://127.0.0.1:9/v1"'])
    assert config.provider.base_url == "http://127.0.0.1:9/v1"
    anthropic = load_config(tmp_path, ['openai_base_url="http://127.0.0.1:9/v1"', 'model="claude-sonnet-4-5"'])
    assert anthropic.provider.base_url != "http://127.0.0.1:9/v1"


def test_codex_api_key_is_the_openai_key_of_last_resort(tmp_path, monkeypatch):
    provider = load_config(tmp_path).provider
    monkeypatch.setenv("CODEX_API_KEY", "from-codex")
    assert resolve_api_key(provider) == "from-codex"
    monkeypatch.setenv("OPENAI_API_KEY", "from-openai")
    assert resolve_api_key(provider) == "from-openai"


def test_prices_match_the_longest_prefix_and_config_wins():
    assert price_for("gpt-5-mini-2025-08-07") == price_for("gpt-5-mini") != price_for("gpt-5")
    assert price_for("my-local-model") is None
    assert price_for("my-local-model", {"my-local-model": {"input": 1, "output": 2}}) == Price(1.0, 1.0, 2.0)
    cost = Price(1.25, 0.125, 10).cost(
        Usage(input_tokens=1_000_000, cached_input_tokens=400_000, output_tokens=100_000)
    )
    assert cost == pytest.approx(0.6 * 1.25 + 0.4 * 0.125 + 0.1 * 10)
