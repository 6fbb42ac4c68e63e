"""The checks of `agent doctor`, each a list of :class:`Finding` rows. A key's value never
appears in one: only the variable's name and where it was found."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

from agent_cli.auth.choice import key_sources
from agent_cli.auth.keys import auth_path, stored_key
from agent_cli.config import Config, ConfigError, find_project_config, read_toml
from agent_cli.display import home_relative, human_size
from agent_cli.items import Message
from agent_cli.lsp.code_checks import CodeChecks
from agent_cli.lsp.manager import PROJECT_LANGUAGES
from agent_cli.lsp.servers import language_of, servers_for
from agent_cli.models.base import Completed, Prompt, TextDelta
from agent_cli.models.errors import ModelError
from agent_cli.models.registry import KEY_FALLBACKS, create_client, provider_location, resolve_api_key
from agent_cli.models.retry import RetryPolicy
from agent_cli.sandbox.policy import detect_mechanism
from agent_cli.sandbox.report import unenforced
from agent_cli.session import Session
from agent_cli.trust.gate import trust_state

OK, WARN, FAIL = "ok", "warn", "FAIL"
REQUEST_TIMEOUT = 30.0
MCP_START_TIMEOUT = 20.0
LANGUAGE_SCAN_FILES = 20_000  # files looked at for the project's languages


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
    """Every key found (by variable and place, never its value), and the one in use and why."""
    rows = [Finding("keys", OK, f"{name}: {where}") for name, where in key_sources(config.agent_home)]
    provider = config.provider
    if not provider.requires_key or not provider.env_key:
        return [*rows, Finding("keys", OK, f"{provider.id} needs no API key{provider_reason(config)}")]
    if not rows:
        return [Finding("keys", WARN, "no API key in the environment or stored (`agent login`)")]
    names = (provider.env_key, KEY_FALLBACKS.get(provider.env_key, ""))
    exported = next((name for name in names if name and os.environ.get(name, "").strip()), None)
    if exported is not None:
        used = f"{exported}, exported in this shell"
    elif stored_key(provider.env_key, config.agent_home):
        used = f"{provider.env_key}, stored in {home_relative(auth_path(config.agent_home))}"
    else:
        return rows  # the model row says what is missing
    return [*rows, Finding("keys", OK, f"in use: {used}, for {provider.id}{provider_reason(config)}")]


def provider_reason(config: Config) -> str:
    """Why the run uses its provider: the layer that named it or its model, or the key found."""
    if config.provider_reason:
        return f" ({config.provider_reason})"
    for layer in reversed(config.layers):
        for key in ("model_provider", "model"):
            if key in layer.table:
                where = {"flags": "a flag", "override": layer.origin}.get(layer.kind, home_relative(Path(layer.origin)))
                return f" ({key} = {layer.table[key]!r}, from {where})"
    return " (the default)"


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
    """The servers an edit here would start, for the languages this project has (by its marker
    files and its files' extensions), found on PATH or named by ``[lsp.NAME]`` (none is started
    here); the project's languages that have none; and the lint/test commands."""
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
        autodetect = os.environ.get("AGENT_LSP_AUTODETECT") != "0"
        specs = settings.specs if autodetect else [spec for spec in settings.specs if spec.configured]
        languages = project_languages(settings.project_root)
        found: dict[str, list[str]] = {}
        for language in languages:
            for spec in servers_for(language, specs, which):
                found.setdefault(spec.name, []).append(language)
        by_name = {spec.name: spec for spec in settings.specs}
        for name, served in found.items():
            path = which(by_name[name].command[0]) or by_name[name].command[0]
            rows.append(Finding("lsp", OK, f"{name} for {', '.join(served)}: {home_relative(Path(path))}"))
        if not autodetect:
            rows.append(
                Finding("lsp", OK, "servers on PATH are left out (AGENT_LSP_AUTODETECT=0): only [lsp.NAME] ones")
            )
        served_languages = {language for served in found.values() for language in served}
        for language, evidence in languages.items():
            if autodetect and language not in served_languages:
                known = ", ".join(spec.name for spec in settings.specs if language in spec.languages) or "none known"
                rows.append(
                    Finding(
                        "lsp",
                        WARN,
                        f"no {language} language server on PATH ({evidence}; known: {known}): edits get no diagnostics",
                    )
                )
        if not rows:
            rows.append(Finding("lsp", OK, "no language server found on PATH ([lsp.NAME] in config.toml names one)"))
    commands = code.project.commands
    text = ", ".join(f"{kind}_command: {commands.get(kind) or 'not set'}" for kind in ("lint", "test"))  # type: ignore[call-overload]
    rows.append(Finding("checks", OK, text))
    return rows


def project_languages(root: Path) -> dict[str, str]:
    """The languages of the project at ``root`` -> what shows it (a marker file, or the first file
    of the language found), from its marker files and the extensions of its files (git's list,
    else a walk of at most ``LANGUAGE_SCAN_FILES`` files)."""
    languages = {language: marker for marker, language in PROJECT_LANGUAGES.items() if (root / marker).exists()}
    for name in project_files(root):
        language = language_of(Path(name))
        if language is not None and language not in languages:
            languages[language] = f"{Path(name).suffix} files"
    return dict(sorted(languages.items()))


def project_files(root: Path) -> list[str]:
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z"], cwd=root, capture_output=True, timeout=10, check=True
        ).stdout.decode(errors="replace")
        return listed.split("\0")[:LANGUAGE_SCAN_FILES]
    except (OSError, subprocess.SubprocessError):
        pass
    names: list[str] = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d not in ("node_modules", "target", "venv")]
        names += [os.path.join(folder, name) for name in files]
        if len(names) >= LANGUAGE_SCAN_FILES:
            break
    return names[:LANGUAGE_SCAN_FILES]


def disk_use(home: Path) -> Finding:
    total = 0
    for root, _, files in os.walk(home):
        for name in files:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return Finding("disk", OK, f"{home_relative(home)}: {human_size(total)}")
