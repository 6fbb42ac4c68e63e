"""Which provider and model a run uses when the config, the flags and ``-c`` name neither: the
set-up screen's choice (``setup.json``), else the provider whose key is present (in the
environment or stored by `agent login`). With several keys it says which it took and how to
choose another. Plain data in, plain data out: config.py calls it while merging its layers."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.auth.keys import stored_keys
from agent_cli.display import home_relative
from agent_cli.paths import open_private

SETUP_FILE = "setup.json"
# The providers a key alone selects, in order of preference, with the model each starts on.
KEYED_PROVIDERS = (
    ("openai", "OpenAI", ("OPENAI_API_KEY", "CODEX_API_KEY"), "gpt-5"),
    ("anthropic", "Anthropic", ("ANTHROPIC_API_KEY",), "claude-sonnet-4-5"),
)
DEFAULT_MODELS = {provider: model for provider, _, _, model in KEYED_PROVIDERS}


@dataclass(frozen=True)
class Choice:
    provider: str
    model: str
    note: str | None = None  # why, when it could have been another
    providers: dict[str, Any] = field(default_factory=dict)  # [model_providers] tables it needs


def choose(merged: dict[str, Any], home: Path) -> Choice | None:
    """The provider and model for a config whose layers set neither; None when they set one
    (a model alone picks its provider as before; a provider alone gets its default model)."""
    if "model_provider" in merged:
        provider = merged["model_provider"]
        if "model" not in merged and provider in DEFAULT_MODELS:
            return Choice(provider, DEFAULT_MODELS[provider])
        return None
    if "model" in merged:
        return None
    saved = read_setup(home)
    if saved is not None:
        return saved
    found = [(pid, name, model) for pid, name, env, model in KEYED_PROVIDERS if has_key(env, home)]
    if not found:
        return None
    provider, name, model = found[0]
    note = None
    if len(found) > 1:
        others = ", ".join(f"--provider {pid}" for pid, _, _ in found[1:])
        note = (
            f"keys for {' and '.join(n for _, n, _ in found)} are set; using {name} ({model}). "
            f"Choose with {others}, or model_provider in {home_relative(home / 'config.toml')}"
        )
    return Choice(provider, model, note)


def has_key(names: tuple[str, ...], home: Path) -> bool:
    stored = stored_keys(home)
    return any(os.environ.get(name, "").strip() or stored.get(name) for name in names)


def key_sources(home: Path) -> list[tuple[str, str]]:
    """(variable, where: "environment" or "stored") for every key found; the keys never leave."""
    stored = stored_keys(home)
    names = dict.fromkeys([*(n for _, _, env, _ in KEYED_PROVIDERS for n in env), *stored])
    found = []
    for name in names:
        if os.environ.get(name, "").strip():
            found.append((name, "environment" + (" (a stored key too, unused)" if name in stored else "")))
        elif name in stored:
            found.append((name, f"stored in {home_relative(home / 'auth.json')}"))
    return found


def read_setup(home: Path) -> Choice | None:
    try:
        data = json.loads((home / SETUP_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (
        not isinstance(data, dict)
        or not isinstance(data.get("provider"), str)
        or not isinstance(data.get("model"), str)
    ):
        return None
    providers = data.get("providers")
    return Choice(data["provider"], data["model"], None, providers if isinstance(providers, dict) else {})


def write_setup(home: Path, choice: Choice) -> Path:
    path = home / SETUP_FILE
    with open_private(path, "w") as handle:
        json.dump({"provider": choice.provider, "model": choice.model, "providers": choice.providers}, handle, indent=2)
        handle.write("\n")
    return path


def forget_setup(home: Path) -> bool:
    try:
        (home / SETUP_FILE).unlink()
    except FileNotFoundError:
        return False
    return True


def apply_choice(merged: dict[str, Any], home: Path) -> str | None:
    """Fill ``model_provider`` and ``model`` (and the provider table a local server needs) into
    the merged config when its layers left them out; the note to show, if any."""
    choice = choose(merged, home)
    if choice is None:
        return None
    merged["model_provider"] = choice.provider
    merged["model"] = choice.model
    if choice.providers:  # a local server's URL (a table of the config wins over it)
        tables = merged.setdefault("model_providers", {})
        for provider_id, table in choice.providers.items():
            tables.setdefault(provider_id, table)
    return choice.note
