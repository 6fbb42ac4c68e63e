"""What a task on another machine needs of the driver to reach the model, and nothing else.

The provider's key (from the environment, or the one `agent login` stored) and endpoint variables
travel as the Ray task's environment variables; the provider and model in force, and a provider
the user's config defines, travel as ``--provider``/``-m``/``-c`` options of its `agent exec`. The
rest of the driver's environment and config stays on the driver. All of it is what the driver's
session would use: a repository's own provider, model and ``model_providers`` only once it is
trusted (as ``-c`` options they would be trusted on every node, and its endpoint would get the key).
"""

from __future__ import annotations

import json
import os
from typing import Any

from agent_cli.config import Config
from agent_cli.models.registry import BUILTIN_PROVIDERS, KEY_FALLBACKS, resolve_api_key
from agent_cli.trust.gate import config_in_force

CLOUD_VARIABLES = {
    "azure": ("AZURE_OPENAI_AD_TOKEN", "OPENAI_API_VERSION"),
    "bedrock": ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION"),
    "vertex": ("ANTHROPIC_VERTEX_PROJECT_ID", "CLOUD_ML_REGION", "GOOGLE_CLOUD_PROJECT"),
}


def provider_variables(config: Config) -> dict[str, str]:
    """The environment variables the provider in force reads, with the driver's values."""
    provider = config_in_force(config).provider
    names = [provider.env_key, KEY_FALLBACKS.get(provider.env_key or ""), provider.base_url_env]
    names += CLOUD_VARIABLES.get(provider.kind, ())
    found = {name: os.environ[name] for name in names if name and os.environ.get(name)}
    if provider.env_key and provider.env_key not in found and (key := resolve_api_key(provider)):
        found[provider.env_key] = key  # stored by `agent login`: the node has no such file
    return found


def provider_options(config: Config) -> list[str]:
    """``--provider``, ``-m`` and, for a provider the user's config defines, its table as ``-c``."""
    config = config_in_force(config)
    options = ["--provider", config.provider.id, "-m", config.model]
    table = (config.raw.get("model_providers") or {}).get(config.provider.id)
    if isinstance(table, dict) and config.provider.id not in BUILTIN_PROVIDERS:
        options += ["-c", f"model_providers.{config.provider.id}={inline_toml(table)}"]
    return options


def inline_toml(value: Any) -> str:
    """A value as TOML on one line (JSON's strings and numbers are TOML's too)."""
    if isinstance(value, dict):
        return "{" + ", ".join(f"{json.dumps(str(key))} = {inline_toml(item)}" for key, item in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(inline_toml(item) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return json.dumps(value)
    return json.dumps(str(value))
