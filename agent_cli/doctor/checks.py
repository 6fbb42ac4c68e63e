"""The checks of `agent doctor`, each a list of :class:`Finding` rows. A key's value never
appears in one: only the variable's name and where it was found."""

from __future__ import annotations

import asyncio
import os
import time
from dataclasses import dataclass
from pathlib import Path

from agent_cli.auth.choice import key_sources
from agent_cli.config import Config, ConfigError, find_project_config, read_toml
from agent_cli.display import home_relative, human_size
from agent_cli.items import Message
from agent_cli.models.base import Completed, Prompt, TextDelta
from agent_cli.models.errors import ModelError
from agent_cli.models.registry import create_client, provider_location, resolve_api_key
from agent_cli.models.retry import RetryPolicy
from agent_cli.sandbox.policy import detect_mechanism
from agent_cli.sandbox.report import unenforced
from agent_cli.session import Session
from agent_cli.trust.gate import trust_state

OK, WARN, FAIL = "ok", "warn", "FAIL"
REQUEST_TIMEOUT = 30.0
MCP_START_TIMEOUT = 20.0


@dataclass(frozen=True)
class Finding:
    area: str
    status: str  # ok, warn or FAIL
    text: str


def config_files(cwd: Path, home: Path) -> list[Finding]:
    """Each config file that exists, read and checked on its own."""
    found = []
    for path in (home / "config.toml", find_project_config(cwd)):
        if path is None or not path.is_file():
            continue
        try:
            read_toml(path)
        except ConfigError as exc:
            found.append(Finding("config", FAIL, str(exc)))
        else:
            found.append(Finding("config", OK, f"read {home_relative(path)}"))
    return found or [Finding("config", OK, f"no config file (defaults; {home_relative(home / 'config.toml')})")]


def keys(config: Config) -> list[Finding]:
    sources = key_sources(config.agent_home)
    if not sources:
        return [Finding("keys", WARN, "no API key in the environment or stored (`agent login`)")]
    return [Finding("keys", OK, f"{name}: {where}") for name, where in sources]


async def model_request(config: Config) -> Finding:
    """One real, short request to the configured provider and model, timed."""
    provider = config.provider
    where = provider_location(provider) or "the provider's default URL"
    label = f"{provider.id} ({where}), model {config.model}"
    started = time.monotonic()
    try:
        client = create_client(
            provider,
            config.model,
            api_key=resolve_api_key(provider),
            retry=RetryPolicy(max_attempts=1),
            max_output_tokens=16,
            timeout=REQUEST_TIMEOUT,
        )
    except ModelError as exc:
        return Finding("model", FAIL, f"{label}: {exc}")
    text = ""
    try:
        prompt = Prompt("Reply with the word OK.", [Message("user", "ping")])
        async for event in client.stream(prompt):
            if isinstance(event, TextDelta):
                text += event.text
            elif isinstance(event, Completed):
                break
    except ModelError as exc:
        return Finding("model", FAIL, f"{label}: {exc}")
    except Exception as exc:  # noqa: BLE001 - whatever broke, doctor says it
        return Finding("model", FAIL, f"{label}: {type(exc).__name__}: {exc}")
    finally:
        await client.aclose()
    seconds = time.monotonic() - started
    return Finding("model", OK, f"{label} answered in {seconds:.2f} s ({len(text)} characters)")


def sandbox(config: Config) -> list[Finding]:
    mechanism = detect_mechanism()
    rows = [Finding("sandbox", OK if mechanism.name != "none" else WARN, f"{config.sandbox_mode}, {mechanism.detail}")]
    missing = unenforced(config.network_access)
    if missing and config.sandbox_mode != "danger-full-access":
        rows.append(Finding("sandbox", WARN, "not enforced by this kernel: " + "; ".join(missing)))
    return rows


def trust(config: Config) -> Finding:
    state = trust_state(config)
    if not state.inventory.items:
        return Finding("trust", OK, "this folder has no code of its own for the agent to run")
    names = ", ".join(f"{item.kind} {item.name}" for item in state.inventory.items)
    if state.trusted:
        return Finding("trust", OK, f"trusted: {names}")
    asked = "declined" if state.answer is False else "not asked yet (the TUI asks)"
    return Finding("trust", WARN, f"not trusted ({asked}); would run: {names}")


async def session_parts(session: Session) -> list[Finding]:
    """What a session built here loads: warnings, hooks, plugins, MCP servers (started)."""
    rows = [Finding("load", WARN, warning) for warning in session.take_load_warnings()]
    hooks = sum(len(specs) for specs in session.hooks.table.values())
    rows.append(Finding("hooks", OK, f"{hooks} hook(s)" + (f": {', '.join(session.hooks.table)}" if hooks else "")))
    plugins = session.plugins.active
    rows.append(Finding("plugins", OK, ", ".join(p.name for p in plugins) if plugins else "none"))
    if session.mcp is None:
        rows.append(Finding("mcp", OK, "no MCP servers"))
        return rows
    session.start_mcp()
    manager = session.mcp.manager
    try:
        await asyncio.wait_for(manager.wait_started(), MCP_START_TIMEOUT)
    except TimeoutError:
        pass
    for state in manager.states():
        if state.status == "ready":
            rows.append(Finding("mcp", OK, f"{state.name}: {state.tools} tools ({state.transport})"))
        elif state.status == "disabled":
            rows.append(Finding("mcp", OK, f"{state.name}: disabled"))
        else:
            rows.append(Finding("mcp", FAIL, f"{state.name}: {state.status}: {state.error or 'no answer'}"))
    return rows


def disk_use(home: Path) -> Finding:
    total = 0
    for root, _, files in os.walk(home):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return Finding("disk", OK, f"{home_relative(home)}: {human_size(total)}")
