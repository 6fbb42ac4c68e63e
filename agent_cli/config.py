"""Configuration: defaults < $AGENT_HOME/config.toml < project .agent/config.toml < -c overrides < flags.

Every value is checked against ``KEYS``; a bad value is a :class:`ConfigError` that names the
file, the key and the expected type.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_cli.files.limits import ReadLimits
from agent_cli.models.model_info import context_window_for, default_provider_for
from agent_cli.models.registry import BUILTIN_PROVIDERS, ProviderConfig
from agent_cli.paths import agent_home

DEFAULT_MODEL = "gpt-5"
MODES = ("agent", "ask", "plan")
APPROVAL_POLICIES = ("untrusted", "on-request", "on-failure", "never")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
WIRE_APIS = ("responses", "chat", "anthropic")
# Settings of a repository's own .agent/config.toml that apply only once the folder is trusted:
# they lift the sandbox, choose where requests (and the API key) go, or what commands inherit.
REPOSITORY_SETTINGS = (
    "sandbox_mode", "approval_policy", "network_access", "writable_roots", "sandbox_workspace_write",
    "shell_environment_policy", "model_providers", "openai_base_url", "web_fetch_allow_private",
    "web_search_api", "memory_user_writes",
)


@dataclass(frozen=True)
class ConfigLayer:
    """One table that went into the merge, kept so that rules and trust know where a key came from."""

    kind: str  # user | project | override | flags
    origin: str  # the file, or "-c key=value"
    path: Path | None
    table: dict[str, Any]


class ConfigError(Exception):
    """Bad configuration. The message names where the bad value came from."""


# key -> (type, allowed values or None). Tables are validated separately.
KEYS: dict[str, tuple[type | tuple[type, ...], tuple[Any, ...] | None]] = {
    "model": (str, None),
    "model_provider": (str, None),
    "model_context_window": (int, None),
    "model_max_output_tokens": (int, None),
    "model_reasoning_effort": (str, ("none", "minimal", "low", "medium", "high", "xhigh")),  # Codex's values
    "tool_output_token_limit": (int, None),
    "auto_compact": (bool, None),
    "auto_compact_percent": (int, None),
    "model_auto_compact_token_limit": (int, None),
    "project_doc_max_bytes": (int, None),
    "project_doc_fallback_filenames": (list, None),
    "approval_policy": (str, APPROVAL_POLICIES),
    "sandbox_mode": (str, SANDBOX_MODES),
    "network_access": (bool, None),
    "writable_roots": (list, None),
    "shell_timeout_ms": (int, None),
    "mode": (str, MODES),
    "model_providers": (dict, None),
    "hooks": (dict, None),
    "shell_environment_policy": (dict, None),
    "retry_max_attempts": (int, None),
    "model_connect_timeout_ms": (int, None),
    "stream_idle_timeout_ms": (int, None),
    "shell_snapshot": (bool, None),
    "memory": (bool, None),
    "memory_top_k": (int, None),
    "memory_max_chars": (int, None),
    "memory_min_score": ((int, float), None),
    "memory_user_writes": (str, ("ask", "allow", "deny")),
    "plugins": (dict, None),
    "max_agent_depth": (int, None),
    "max_parallel_agents": (int, None),
    "read_file": (dict, None),
    "model_supports_images": (bool, None),
    "mcp_servers": (dict, None),
    "mcp_tool_budget_percent": (int, None),
    "permissions": (dict, None),
    "context_profile": (str, ("auto", "lean", "full")),
    "model_prices": (dict, None),  # agent exec --max-budget-usd (models/pricing.py)
    "openai_base_url": (str, None),  # Codex's key: where the built-in OpenAI providers send requests
    "sandbox_workspace_write": (dict, None),  # Codex's table: network_access, writable_roots
    "web_fetch_allow_private": (bool, None),
    "web_search": (str, ("off", "cached", "live", "disabled")),  # "disabled": Codex's (and its SDK's) name for off
    "web_search_api": (dict, None),  # tools/web_search_api.py: a search API for servers without their own  # Codex's setting: the provider's own web search  # web_fetch may reach loopback, private and link-local addresses
    "checkpoints": (bool, None),
    "checkpoint_max_file_bytes": (int, None),
    "checkpoint_timeout_ms": (int, None),
}
SIMPLE_KEYS = (
    "tool_output_token_limit", "model_max_output_tokens", "model_reasoning_effort", "auto_compact",
    "auto_compact_percent", "model_auto_compact_token_limit", "project_doc_max_bytes", "approval_policy",
    "sandbox_mode", "network_access", "shell_timeout_ms", "mode", "retry_max_attempts",
    "model_connect_timeout_ms", "stream_idle_timeout_ms", "shell_snapshot",
    "memory", "memory_top_k", "memory_max_chars", "memory_min_score", "memory_user_writes",
    "max_agent_depth", "max_parallel_agents", "mcp_tool_budget_percent",
    "model_supports_images", "web_fetch_allow_private", "web_search", "context_profile",
    "checkpoints", "checkpoint_max_file_bytes", "checkpoint_timeout_ms",
)
FIELD_NAMES = {  # config key -> Config field, where they differ
    "model_max_output_tokens": "max_output_tokens",
    "model_reasoning_effort": "reasoning_effort",
    "model_auto_compact_token_limit": "auto_compact_token_limit",
    "model_supports_images": "supports_images",
}
MINIMUMS = {
    "model_context_window": 1_000,
    "model_max_output_tokens": 1,
    "tool_output_token_limit": 100,
    "auto_compact_percent": 1,
    "model_auto_compact_token_limit": 1,
    "project_doc_max_bytes": 0,
    "shell_timeout_ms": 100,
    "retry_max_attempts": 1,
    "model_connect_timeout_ms": 1,
    "stream_idle_timeout_ms": 1,
    "memory_top_k": 1,
    "memory_max_chars": 100,
    "memory_min_score": 0,
    "max_agent_depth": 0,
    "max_parallel_agents": 1,
    "mcp_tool_budget_percent": 0,
    "checkpoint_max_file_bytes": 0,
    "checkpoint_timeout_ms": 100,
}
MAXIMUMS = {"memory_min_score": 1}
STRING_LISTS = ("project_doc_fallback_filenames", "writable_roots")
PROVIDER_KEYS = {"name": str, "base_url": str, "wire_api": str, "env_key": str, "requires_key": bool,
                 "http_headers": dict, "query_params": dict}
_TYPE_NAMES = {str: "a string", int: "an integer", bool: "a boolean", list: "an array", dict: "a table", (int, float): "a number"}


@dataclass(frozen=True)
class Config:
    """What the files, ``-c`` and the flags say, read only: a front end that changes an option
    (``--trust``, ``--add-dir``, the model ``/model`` chose for ``/new``) makes a new one with
    :func:`dataclasses.replace`; what a session changes while it runs (model, mode, the window it
    learns, ``/autocompact``) is the session's own state."""

    cwd: Path
    agent_home: Path
    model: str
    provider: ProviderConfig
    context_window: int  # configured, else config.model's in the model table (the session learns its own)
    tool_output_token_limit: int = 10_000
    max_output_tokens: int | None = None
    reasoning_effort: str | None = None
    auto_compact: bool = True
    auto_compact_percent: int = 85
    auto_compact_token_limit: int | None = None
    project_doc_max_bytes: int = 32 * 1024
    project_doc_fallback_filenames: tuple[str, ...] = ()
    approval_policy: str = "on-request"
    sandbox_mode: str = "workspace-write"
    network_access: bool = False
    web_fetch_allow_private: bool = False  # tools/web_fetch.py: refuse private addresses unless set
    web_search: str | None = None  # off | cached | live; unset: cached in the TUI, off in exec
    writable_roots: tuple[Path, ...] = ()
    shell_timeout_ms: int = 120_000
    mode: str = "agent"
    retry_max_attempts: int = 5
    model_connect_timeout_ms: int = 10_000  # connecting to the model server
    stream_idle_timeout_ms: int = 120_000  # waiting for the first byte, and between stream events
    shell_snapshot: bool = True  # load a snapshot of the login shell instead of `bash -lc` per command
    memory: bool = True  # memory/: recall each turn, the memory tools, /memory
    memory_top_k: int = 5
    memory_max_chars: int = 2_000
    memory_min_score: float = 0.6  # memory/ranking.py explains the scale
    context_profile: str = "auto"  # "lean" for small windows (context/profile.py); "auto": lean up to 8k
    memory_user_writes: str = "ask"  # the model's user-scope memory_save: ask (exec: refused) | allow | deny
    max_agent_depth: int = 1  # how deep subagents may nest: 1 = the session's children have no `task`
    max_parallel_agents: int = 4  # `task` calls of one response that run at once
    read_file: ReadLimits = field(default_factory=ReadLimits)  # thresholds of the file processors
    supports_images: bool | None = None  # None: from the model table (models/model_info.py)
    mcp_tool_budget_percent: int = 5  # MCP tool schemas above this share of the window: search mode
    checkpoints: bool = True  # snapshot the tree before a turn changes it (/undo, /rewind)
    checkpoint_max_file_bytes: int = 10 * 1024 * 1024  # larger files are left out of snapshots, and named
    checkpoint_timeout_ms: int = 30_000  # a snapshot taking longer is given up with a warning
    raw: dict[str, Any] = field(default_factory=dict)  # the merged tables, for hooks and the like
    sources: tuple[Path, ...] = ()  # config files that were read
    warnings: tuple[str, ...] = ()  # shown when the session starts (unknown keys)
    plugin_dirs: tuple[Path, ...] = ()  # --plugin-dir (agent_cli/plugins/loader.py)
    layers: tuple[ConfigLayer, ...] = ()  # each table merged, in order
    trust_repository: bool = False  # --trust: run the repository's own servers and hooks (agent_cli/trust/)


def find_project_config(cwd: Path) -> Path | None:
    """The nearest .agent/config.toml from cwd up to the git root (or the filesystem root)."""
    home_config = (agent_home() / "config.toml").resolve()
    for directory in [cwd, *cwd.parents]:
        candidate = directory / ".agent" / "config.toml"
        if candidate.is_file() and candidate.resolve() != home_config:
            return candidate
        if (directory / ".git").exists():
            break
    return None


def read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # here: without a config file or -c, start-up does not load the parser

    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: invalid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text; TOML files must be UTF-8") from None
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read: {exc.strerror}") from None


def parse_override(text: str) -> tuple[list[str], Any]:
    """``a.b=value`` with the value parsed as TOML (bare words are taken as strings)."""
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or not key:
        raise ConfigError(f"-c {text!r}: expected key=value")
    import tomllib

    try:
        parsed = tomllib.loads(f"v = {value.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        parsed = value.strip()
    return key.split("."), parsed


def _merge(base: dict[str, Any], update: dict[str, Any]) -> None:
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            _merge(base[key], value)
        else:
            base[key] = value


def _check(table: dict[str, Any], origin: str, warnings: list[str] | None = None) -> None:
    for key, value in table.items():
        if key not in KEYS:
            if warnings is not None:  # tolerated so newer configs keep working, but a typo is shown
                warnings.append(f"{origin}: unknown config key `{key}` (ignored)")
            continue
        expected, allowed = KEYS[key]
        if not isinstance(value, expected) or (expected in (int, (int, float)) and isinstance(value, bool)):
            got = f"{type(value).__name__} {value!r}"
            raise ConfigError(f"{origin}: `{key}` must be {_TYPE_NAMES[expected]}, got {got}")
        if allowed and value not in allowed:
            raise ConfigError(f"{origin}: `{key}` must be one of {', '.join(allowed)}; got {value!r}")
        if key in MINIMUMS and value < MINIMUMS[key]:
            raise ConfigError(f"{origin}: `{key}` must be at least {MINIMUMS[key]}; got {value}")
        if key in MAXIMUMS and value > MAXIMUMS[key]:
            raise ConfigError(f"{origin}: `{key}` must be at most {MAXIMUMS[key]}; got {value}")
        if key in STRING_LISTS and not all(isinstance(entry, str) for entry in value):
            raise ConfigError(f"{origin}: `{key}` must be an array of strings; got {value!r}")
    for provider_id, provider in table.get("model_providers", {}).items():
        where = f"{origin}: `model_providers.{provider_id}`"
        if not isinstance(provider, dict):
            raise ConfigError(f"{where} must be a table")
        for key, value in provider.items():
            expected_type = PROVIDER_KEYS.get(key)
            if expected_type and not isinstance(value, expected_type):
                raise ConfigError(f"{where}.{key} must be {_TYPE_NAMES[expected_type]}, got {value!r}")
        for key in ("http_headers", "query_params"):  # Codex's names: sent with every request
            if not all(isinstance(v, str) for v in provider.get(key, {}).values()):
                raise ConfigError(f"{where}.{key} must be a table of strings; got {provider[key]!r}")
        if provider.get("wire_api", "chat") not in WIRE_APIS:
            raise ConfigError(f"{where}.wire_api must be one of {', '.join(WIRE_APIS)}; got {provider['wire_api']!r}")
    plugins = table.get("plugins", {})
    disabled = plugins.get("disabled", []) if isinstance(plugins, dict) else []
    if not isinstance(disabled, list) or not all(isinstance(name, str) for name in disabled):
        raise ConfigError(f"{origin}: `plugins.disabled` must be an array of plugin names; got {disabled!r}")
    for key, parse, names_the_file in _TABLE_PARSERS:  # each table is a dict here: the type check above ran
        if key in table:
            try:
                parse(table[key], origin)
            except ValueError as exc:
                raise ConfigError(str(exc) if names_the_file else f"{origin}: {exc}") from None


def _env_policy(table: Any, origin: str) -> None:
    from agent_cli.tools.shell_env import EnvPolicy

    EnvPolicy.from_table(table)


def _mcp_servers(table: Any, origin: str) -> None:
    from agent_cli.mcp.config import check_servers_table

    check_servers_table(table, origin)


def _permissions(table: Any, origin: str) -> None:
    from agent_cli.permissions.sources import check_permissions_table

    check_permissions_table(table, origin)


def _hooks(table: Any, origin: str) -> None:
    from agent_cli.session.hook_config import parse_hooks

    parse_hooks(table, origin)


# The tables that have parsers of their own (imported only when the table is set), as (key, parser,
# whether the parser's ValueError already names the file).
_TABLE_PARSERS: tuple[tuple[str, Callable[[Any, str], object], bool], ...] = (
    ("shell_environment_policy", _env_policy, False),
    ("mcp_servers", _mcp_servers, True),
    ("read_file", lambda table, origin: ReadLimits.from_table(table), False),
    ("hooks", _hooks, True),
    ("permissions", _permissions, True),
)


def _codex_sandbox_table(merged: dict[str, Any]) -> None:
    """Codex's ``[sandbox_workspace_write]`` (network_access, writable_roots) as our top-level keys;
    a top-level key the user set wins."""
    table = merged.get("sandbox_workspace_write") or {}
    for key, expected in (("network_access", bool), ("writable_roots", list)):
        if key not in table:
            continue
        if not isinstance(table[key], expected):
            raise ConfigError(f"`sandbox_workspace_write.{key}` must be {_TYPE_NAMES[expected]}; got {table[key]!r}")
        merged.setdefault(key, table[key])


def _provider(provider_id: str, tables: dict[str, Any]) -> ProviderConfig:
    custom = tables.get(provider_id)
    builtin = BUILTIN_PROVIDERS.get(provider_id)
    if custom is None and builtin is None:
        known = sorted({*BUILTIN_PROVIDERS, *tables})
        raise ConfigError(f"unknown model provider {provider_id!r}; known providers: {', '.join(known)}")
    if custom is None:
        return builtin  # type: ignore[return-value]
    base = builtin or ProviderConfig(id=provider_id, wire_api="chat", requires_key=False)
    return ProviderConfig(
        id=provider_id,
        wire_api=custom.get("wire_api", base.wire_api),
        base_url=custom.get("base_url", base.base_url),
        env_key=custom.get("env_key", base.env_key),
        base_url_env=base.base_url_env if "base_url" not in custom else None,
        requires_key=custom.get("requires_key", bool(custom.get("env_key", base.env_key))),
        name=custom.get("name", base.name or provider_id),
        kind=base.kind,
        http_headers={**base.http_headers, **custom.get("http_headers", {})},
        query_params={**base.query_params, **custom.get("query_params", {})},
    )


def load_config(
    cwd: Path | None = None,
    overrides: list[str] = (),  # type: ignore[assignment]
    flags: dict[str, Any] | None = None,
) -> Config:
    """Merge every layer and return a checked :class:`Config`."""
    cwd = (cwd or Path.cwd()).resolve()
    if not cwd.is_dir():
        problem = "is not a directory" if cwd.exists() else "does not exist"
        raise ConfigError(f"working directory {cwd} {problem}")
    home = agent_home()
    sources: list[Path] = []
    warnings: list[str] = []
    layers: list[ConfigLayer] = []
    for kind, path in (("user", home / "config.toml"), ("project", find_project_config(cwd))):
        if path is not None and path.is_file():
            table = read_toml(path)
            _check(table, str(path), warnings)
            sources.append(path)
            layers.append(ConfigLayer(kind, str(path), path, table))
    for text in overrides:
        keys, value = parse_override(text)
        table: dict[str, Any] = value
        for key in reversed(keys):
            table = {key: table}
        _check(table, f"-c {text}", warnings)
        layers.append(ConfigLayer("override", f"-c {text}", None, table))
    flag_table = {key: value for key, value in (flags or {}).items() if value is not None}
    _check(flag_table, "command line")
    layers.append(ConfigLayer("flags", "command line", None, flag_table))
    return _build(cwd, home, layers, sources, warnings)


def without_repository_settings(config: Config) -> Config:
    """``config`` as if the project's .agent/config.toml had none of the ``REPOSITORY_SETTINGS``
    (a folder not trusted yet: see agent_cli/trust/)."""
    layers = [
        replace(layer, table={k: v for k, v in layer.table.items() if k not in REPOSITORY_SETTINGS})
        if layer.kind == "project" else layer
        for layer in config.layers
    ]
    rebuilt = _build(config.cwd, config.agent_home, layers, config.sources, config.warnings)
    as_loaded = _build(config.cwd, config.agent_home, config.layers, (), ())
    # What a front end added after loading (agent exec --add-dir) stays.
    added = tuple(root for root in config.writable_roots if root not in as_loaded.writable_roots)
    return replace(rebuilt, writable_roots=rebuilt.writable_roots + added, plugin_dirs=config.plugin_dirs,
                   trust_repository=config.trust_repository, model=config.model,
                   context_window=config.context_window)


def with_model(config: Config, model: str) -> Config:
    """``config`` with another model (the one ``/model`` chose, for the TUI's ``/new`` and
    ``/resume``); a configured window stays, a looked-up one follows the model. The provider stays
    (``/model`` never changes it)."""
    return replace(config, model=model, context_window=window_for(config, model))


def window_for(config: Config, model: str) -> int:
    """The window a session on ``model`` starts from: `model_context_window`, else the model table."""
    return config.context_window if "model_context_window" in config.raw else context_window_for(model)


def _build(cwd: Path, home: Path, layers: Sequence[ConfigLayer], sources: Sequence[Path],
           warnings: Sequence[str]) -> Config:
    merged: dict[str, Any] = {}
    for layer in layers:
        _merge(merged, copy.deepcopy(layer.table))

    _codex_sandbox_table(merged)
    if merged.get("web_search") == "disabled":
        merged["web_search"] = "off"
    model = merged.get("model", DEFAULT_MODEL)
    provider = _provider(merged.get("model_provider") or default_provider_for(model), merged.get("model_providers", {}))
    if merged.get("openai_base_url") and provider.id in ("openai", "openai-chat"):
        provider = replace(provider, base_url=merged["openai_base_url"], base_url_env=None)
    if merged.get("mcp_tool_budget_percent", 0) > 100:
        raise ConfigError(f"`mcp_tool_budget_percent` must be between 0 and 100; got {merged['mcp_tool_budget_percent']}")
    if merged.get("auto_compact_percent", 100) > 100:
        raise ConfigError(f"`auto_compact_percent` must be between 1 and 100; got {merged['auto_compact_percent']}")
    # Keys that map one to one onto a Config field; what is absent keeps the field's default.
    settings = {FIELD_NAMES.get(key, key): merged[key] for key in SIMPLE_KEYS if key in merged}
    return Config(
        cwd=cwd,
        agent_home=home,
        model=model,
        provider=provider,
        context_window=merged.get("model_context_window") or context_window_for(model),
        project_doc_fallback_filenames=tuple(str(name) for name in merged.get("project_doc_fallback_filenames", [])),
        writable_roots=tuple((cwd / Path(str(root)).expanduser()).resolve() for root in merged.get("writable_roots", [])),
        read_file=ReadLimits.from_table(merged.get("read_file")),
        raw=merged,
        sources=tuple(sources),
        warnings=tuple(warnings),
        layers=tuple(layers),
        **settings,
    )
