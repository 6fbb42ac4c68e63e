"""Which provider and model a run uses when the config, the flags and ``-c`` name neither: the
set-up screen's choice (``setup.json``), else the provider whose key is present (in the
environment or stored by `agent login`). With several keys it says which it took and how to
choose another. Plain data in, plain data out: config.py calls it while merging its layers."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field, replace
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
KEYED_IDS = [provider for provider, _, _, _ in KEYED_PROVIDERS]


@dataclass(frozen=True)
class Choice:
    provider: str
    model: str
    note: str | None = None  # a warning: another provider had a key too, and how to choose it
    providers: dict[str, Any] = field(default_factory=dict)  # [model_providers] tables it needs
    reason: str = ""  # why this provider (`agent doctor` says it)


@dataclass(frozen=True)
class KeyedProvider:
    provider: str
    name: str
    variable: str  # the key's variable that is set (or stored)
    model: str
    exported: bool  # in this shell's environment (else stored by `agent login`)

    @property
    def where(self) -> str:
        return "exported in this shell" if self.exported else "stored by `agent login`"


def choose(merged: dict[str, Any], home: Path) -> Choice | None:
    """The provider and model for a config whose layers set neither; None when they set one
    (a model alone picks its provider as before; a provider alone gets its default model).

    A key exported in this shell wins over what is stored (a key `agent login` saved, and the
    provider it chose): with OpenAI's key stored and ANTHROPIC_API_KEY exported, Anthropic. A
    set-up choice of a server that needs none of these keys stays. Whenever another provider has
    a key too, the note says which one was taken and how to choose the other."""
    if "model_provider" in merged:
        provider = merged["model_provider"]
        if "model" not in merged and provider in DEFAULT_MODELS:
            return Choice(provider, DEFAULT_MODELS[provider], reason=f"model_provider names {provider}")
        return None
    if "model" in merged:
        return None
    found = keyed_providers(home)
    exported = [keyed for keyed in found if keyed.exported]
    saved = read_setup(home)
    if saved is not None:
        saved_key = next((keyed for keyed in found if keyed.provider == saved.provider), None)
        keyless = saved.provider not in DEFAULT_MODELS  # a local or custom server
        if keyless or (saved_key is not None and saved_key.exported) or not exported:
            others = [keyed for keyed in exported if keyed.provider != saved.provider]
            note = None
            if others:
                note = (
                    f"{others[0].variable} is {others[0].where}, but the set-up choice wins: {saved.model} via "
                    f"{saved.provider}. Use --provider {others[0].provider} for {others[0].name}"
                )
            return replace(saved, note=note, reason=f"the set-up choice in {home_relative(home / SETUP_FILE)}")
        pick = exported[0]
        note = (
            f"{pick.variable} is {pick.where}: using {pick.name} ({pick.model}) rather than the saved choice, "
            f"{saved.model} via {saved.provider}. Choose that with --provider {saved.provider}"
        )
        return Choice(pick.provider, pick.model, note, reason=f"{pick.variable} is {pick.where}")
    if not found:
        return None
    ordered = sorted(found, key=lambda keyed: not keyed.exported)  # exported first, else in KEYED_PROVIDERS order
    pick, others = ordered[0], ordered[1:]
    note = None
    if others:
        mixed = any(keyed.exported != pick.exported for keyed in others)
        names = " and ".join(
            f"{keyed.name} ({keyed.where})" if mixed else keyed.name
            for keyed in sorted(found, key=lambda keyed: KEYED_IDS.index(keyed.provider))
        )
        why = ": a key exported in this shell wins over a stored one" if mixed else ""
        note = (
            f"keys for {names} are set; using {pick.name} ({pick.model}){why}. "
            f"Choose with {', '.join(f'--provider {keyed.provider}' for keyed in others)}, "
            f"or model_provider in {home_relative(home / 'config.toml')}"
        )
    return Choice(pick.provider, pick.model, note, reason=f"{pick.variable} is {pick.where}")


def keyed_providers(home: Path) -> list[KeyedProvider]:
    """The providers a key alone selects whose key is exported or stored, in preference order."""
    stored = stored_keys(home)
    found = []
    for provider, name, variables, model in KEYED_PROVIDERS:
        exported = next((variable for variable in variables if os.environ.get(variable, "").strip()), None)
        kept = next((variable for variable in variables if stored.get(variable)), None)
        if exported or kept:
            found.append(KeyedProvider(provider, name, exported or kept or "", model, exported is not None))
    return found


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


def apply_choice(merged: dict[str, Any], home: Path) -> Choice | None:
    """Fill ``model_provider`` and ``model`` (and the provider table a local server needs) into
    the merged config when its layers left them out; the choice (its note, its reason), if any."""
    choice = choose(merged, home)
    if choice is None:
        return None
    merged["model_provider"] = choice.provider
    merged["model"] = choice.model
    if choice.providers:  # a local server's URL (a table of the config wins over it)
        tables = merged.setdefault("model_providers", {})
        for provider_id, table in choice.providers.items():
            tables.setdefault(provider_id, table)
    return choice
