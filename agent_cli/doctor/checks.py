"""The checks of `agent doctor`, each a list of :class:`Finding` rows. A key's value never
appears in one: only the variable's name and where it was found."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from agent_cli.auth.choice import key_sources
from agent_cli.config import Config, ConfigError, find_project_config, read_toml
from agent_cli.display import home_relative, human_size
from agent_cli.items import Message
from agent_cli.lsp.code_checks import CodeChecks
from agent_cli.lsp.manager import PROJECT_LANGUAGES
from agent_cli.lsp.servers import servers_for
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


def network(session: Session) -> list[Finding]:
    """The sandbox's network: the mode, and each domain in force with where it is written."""
    network = session.approvals.network
    if network is None:
        return []
    rows = [Finding("network", WARN if network.unavailable else OK, network.summary())]
    rows += [Finding("network", OK, line) for line in network.entry_lines()]
    return rows + [Finding("network", WARN, warning) for warning in network.lists.warnings]


async def session_parts(session: Session) -> list[Finding]:
    """What a session built here loads: warnings, hooks, plugins, MCP servers (started)."""
    rows = [Finding("load", WARN, warning) for warning in session.take_load_warnings()]
    rows += network(session)
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


def language_servers(session: Session) -> list[Finding]:
    """The servers an edit would start, found on PATH or named by ``[lsp.NAME]`` (none is started
    here), the project's languages that have none, and the lint/test commands."""
    code = session.checks
    if not isinstance(code, CodeChecks):
        return []
    rows = []
    if code.lsp is None:
        rows.append(Finding("lsp", OK, "off (lsp = false)"))
    else:
        settings = code.lsp.settings
        which = settings.which or shutil.which
        for spec in settings.specs:
            if spec.configured and spec.command and not which(spec.command[0]):
                rows.append(
                    Finding("lsp", WARN, f"{spec.name}: `{spec.command[0]}` is not on PATH ([lsp.{spec.name}])")
                )
        found: dict[str, list[str]] = {}
        for language in sorted({language for spec in settings.specs for language in spec.languages}):
            for spec in servers_for(language, settings.specs, which):
                found.setdefault(spec.name, []).append(language)
        by_name = {spec.name: spec for spec in settings.specs}
        for name, languages in found.items():
            path = which(by_name[name].command[0]) or by_name[name].command[0]
            rows.append(Finding("lsp", OK, f"{name} for {', '.join(languages)}: {home_relative(Path(path))}"))
        root = settings.project_root
        served = {language for languages in found.values() for language in languages}
        autodetect = os.environ.get("AGENT_LSP_AUTODETECT") != "0"
        if not autodetect:
            rows.append(
                Finding("lsp", OK, "servers on PATH are left out (AGENT_LSP_AUTODETECT=0): only [lsp.NAME] ones")
            )
        for marker, language in PROJECT_LANGUAGES.items():
            if autodetect and (root / marker).exists() and language not in served:
                rows.append(
                    Finding("lsp", WARN, f"no {language} language server on PATH ({marker}): edits get no diagnostics")
                )
        if not rows:
            rows.append(Finding("lsp", OK, "no language server found on PATH ([lsp.NAME] in config.toml names one)"))
    commands = code.project.commands
    text = ", ".join(f"{kind}_command: {commands.get(kind) or 'not set'}" for kind in ("lint", "test"))  # type: ignore[call-overload]
    rows.append(Finding("checks", OK, text))
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
