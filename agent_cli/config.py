"""Configuration: defaults < $AGENT_HOME/config.toml < project .agent/config.toml < -c overrides < flags.

Every key is declared once: a :class:`Config` field that a key sets declares it with
:func:`setting` (its TOML type, allowed values, bounds), and the keys read from ``config.raw``
are ``RAW_KEYS``; ``KEYS`` is made from both. Every value is checked against it; a bad value is a
:class:`ConfigError` that names the file, the key and the expected type. docs/configuration.md
lists every key (a test checks it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from agent_cli.auth.choice import apply_choice
from agent_cli.files.limits import ReadLimits
from agent_cli.hooks.spec import parse_hooks
from agent_cli.lsp.servers import check_lsp_table
from agent_cli.mcp.config import check_servers_table
from agent_cli.models.model_info import context_window_for, default_provider_for
from agent_cli.models.registry import BUILTIN_PROVIDERS, ProviderConfig
from agent_cli.network.lists import check_sandbox_table
from agent_cli.ownership import own_file, own_folders
from agent_cli.paths import agent_home
from agent_cli.permissions.sources import check_permissions_table
from agent_cli.tools.shell_env import EnvPolicy
from agent_cli.untrusted_settings import waits_for_trust
from agent_cli.worktrees.settings import check_worktree_table

DEFAULT_MODEL = "gpt-5"
MODES = ("agent", "ask", "plan")
APPROVAL_POLICIES = ("untrusted", "on-request", "on-failure", "never")
SANDBOX_MODES = ("read-only", "workspace-write", "danger-full-access")
WIRE_APIS = ("responses", "chat", "anthropic")


@dataclass(frozen=True)
class ConfigLayer:
    """One table that went into the merge, kept so that rules and trust know where a key came from."""

    kind: str  # user | project | override | flags
    origin: str  # the file, or "-c key=value"
    path: Path | None
    table: dict[str, Any]


class ConfigError(Exception):
    """Bad configuration. The message names where the bad value came from."""


PROVIDER_KEYS = {
    "name": str,
    "base_url": str,
    "wire_api": str,
    "env_key": str,
    "requires_key": bool,
    "http_headers": dict,
    "query_params": dict,
}
_TYPE_NAMES = {
    str: "a string",
    int: "an integer",
    bool: "a boolean",
    list: "an array",
    dict: "a table",
    (int, float): "a number",
    (bool, dict): "a boolean or a table",
}


@dataclass(frozen=True)
class Key:
    """One config key: the TOML value it takes, and the :class:`Config` field it sets, if any."""

    name: str
    type: type | tuple[type, ...]
    choices: tuple[Any, ...] | None = None
    minimum: int | None = None
    maximum: int | None = None
    strings: bool = False  # an array of strings
    parse: Callable[[Any, str], object] | None = None  # a table's own check, (value, origin)
    parse_names_the_file: bool = False  # whether ``parse``'s ValueError already names the file
    convert: Callable[[Any, Path], Any] | None = None  # (value, cwd) -> the field's value
    field: str | None = None  # the Config field; None: read from ``config.raw`` where it is used


def setting(default: Any = MISSING, *, of: type | tuple[type, ...], key: str | None = None, **rules: Any) -> Any:
    """A :class:`Config` field set by the config key ``key`` (the field's own name by default)
    with the value it finds there, checked by ``rules`` (see :class:`Key`)."""
    return field(default=default, metadata={"key": Key(key or "", of, **rules)})


def _env_policy(table: Any, origin: str) -> None:
    EnvPolicy.from_table(table)


def _paths(roots: list[str], cwd: Path) -> tuple[Path, ...]:
    return tuple((cwd / Path(str(root)).expanduser()).resolve() for root in roots)


@dataclass(frozen=True)
class Config:
    """What the files, ``-c`` and the flags say, read only: a front end that changes an option
    (``--trust``, ``--add-dir``, the model ``/model`` chose for ``/new``) makes a new one with
    :func:`dataclasses.replace`; what a session changes while it runs (model, mode, the window it
    learns, ``/autocompact``) is the session's own state.

    Each field a config key sets declares that key (:func:`setting`); ``KEYS`` and the checks
    are made from these declarations and ``RAW_KEYS``."""

    cwd: Path
    agent_home: Path
    model: str = setting(of=str)
    provider: ProviderConfig = field()  # model_provider, [model_providers], openai_base_url
    # Configured, else config.model's in the model table (a session learns its own: session/window.py).
    context_window: int = setting(of=int, key="model_context_window", minimum=1_000)
    tool_output_token_limit: int = setting(10_000, of=int, minimum=100)
    max_output_tokens: int | None = setting(None, of=int, key="model_max_output_tokens", minimum=1)
    reasoning_effort: str | None = setting(  # Codex's values
        None, of=str, key="model_reasoning_effort", choices=("none", "minimal", "low", "medium", "high", "xhigh")
    )
    auto_compact: bool = setting(True, of=bool)
    auto_compact_percent: int = setting(85, of=int, minimum=1)
    auto_compact_token_limit: int | None = setting(None, of=int, key="model_auto_compact_token_limit", minimum=1)
    project_doc_max_bytes: int = setting(32 * 1024, of=int, minimum=0)
    project_doc_fallback_filenames: tuple[str, ...] = setting(
        (), of=list, strings=True, convert=lambda names, cwd: tuple(str(name) for name in names)
    )
    approval_policy: str = setting("on-request", of=str, choices=APPROVAL_POLICIES)
    sandbox_mode: str = setting("workspace-write", of=str, choices=SANDBOX_MODES)
    network_access: bool = setting(False, of=bool)
    # tools/web_fetch.py: refuse private addresses unless set
    web_fetch_allow_private: bool = setting(False, of=bool)
    # off | cached | live; unset: cached in the TUI, off in exec. "disabled": Codex's (and its SDK's) name for off
    web_search: str | None = setting(None, of=str, choices=("off", "cached", "live", "disabled"))
    writable_roots: tuple[Path, ...] = setting((), of=list, strings=True, convert=_paths)
    shell_timeout_ms: int = setting(120_000, of=int, minimum=100)
    mode: str = setting("agent", of=str, choices=MODES)
    retry_max_attempts: int = setting(5, of=int, minimum=1)
    model_connect_timeout_ms: int = setting(10_000, of=int, minimum=1)  # connecting to the model server
    # waiting for the first byte, and between stream events
    stream_idle_timeout_ms: int = setting(120_000, of=int, minimum=1)
    # load a snapshot of the login shell instead of `bash -lc` per command
    shell_snapshot: bool = setting(True, of=bool)
    # `agent exec` through the warm server (agent_cli/warm/); read by the launcher from the user's file
    exec_daemon: bool = setting(True, of=bool)
    memory: bool = setting(True, of=bool)  # memory/: recall each turn, the memory tools, /memory
    memory_top_k: int = setting(5, of=int, minimum=1)
    memory_max_chars: int = setting(2_000, of=int, minimum=100)
    memory_min_score: float = setting(
        0.6, of=(int, float), minimum=0, maximum=1
    )  # memory/ranking.py explains the scale
    # "lean" for small windows (context/profile.py); "auto": lean up to 8k
    context_profile: str = setting("auto", of=str, choices=("auto", "lean", "full"))
    # the model's user-scope memory_save: ask (exec: refused) | allow | deny
    memory_user_writes: str = setting("ask", of=str, choices=("ask", "allow", "deny"))
    # how deep subagents may nest: 1 = the session's children have no `task`
    max_agent_depth: int = setting(1, of=int, minimum=0)
    max_parallel_agents: int = setting(4, of=int, minimum=1)  # `task` calls of one response that run at once
    read_file: ReadLimits = setting(  # thresholds of the file processors
        ReadLimits(),
        of=dict,
        parse=lambda table, origin: ReadLimits.from_table(table),
        convert=lambda table, cwd: ReadLimits.from_table(table),
    )
    # None: from the model table (models/model_info.py)
    supports_images: bool | None = setting(None, of=bool, key="model_supports_images")
    # MCP tool schemas above this share of the window: search mode
    mcp_tool_budget_percent: int = setting(5, of=int, minimum=0)
    checkpoints: bool = setting(True, of=bool)  # snapshot the tree before a turn changes it (/undo, /rewind)
    # larger files are left out of snapshots, and named
    checkpoint_max_file_bytes: int = setting(10 * 1024 * 1024, of=int, minimum=0)
    checkpoint_timeout_ms: int = setting(
        30_000, of=int, minimum=100
    )  # a snapshot taking longer is given up with a warning
    # everything the agent keeps under its home (outputs, sessions, checkpoints): oldest removed past it
    home_budget_mb: int = setting(2048, of=int, minimum=100)
    # agent_cli/lsp/: how long an edit waits for diagnostics (a server's start included), their budget
    lsp_wait_ms: int = setting(5_000, of=int, minimum=0)
    lsp_token_limit: int = setting(1_000, of=int, minimum=50)
    # the project's own checks, run after a turn that changed files (and by /lint, /test)
    lint_command: str | None = setting(None, of=str)
    test_command: str | None = setting(None, of=str)
    check_rounds: int = setting(3, of=int, minimum=0)  # failures sent back to the model in one turn
    check_timeout_ms: int = setting(600_000, of=int, minimum=100)
    raw: dict[str, Any] = field(default_factory=dict)  # the merged tables, for hooks and the like
    sources: tuple[Path, ...] = ()  # config files that were read
    warnings: tuple[str, ...] = ()  # shown when the session starts (unknown keys)
    provider_reason: str = ""  # why this provider when no layer named one (auth/choice.py; `agent doctor`)
    plugin_dirs: tuple[Path, ...] = ()  # --plugin-dir (agent_cli/plugins/loader.py)
    layers: tuple[ConfigLayer, ...] = ()  # each table merged, in order
    trust_repository: bool = False  # --trust: run the repository's own servers and hooks (agent_cli/trust/)
    # which of Claude Code's settings files load: user, project, local (the Claude Agent SDK's --setting-sources)
    claude_settings: tuple[str, ...] = ("user", "project", "local")


# The keys no field declares: read from ``config.raw`` where they are used.
RAW_KEYS = (
    Key("model_provider", str),
    Key("model_providers", dict),
    Key("hooks", dict, parse=parse_hooks, parse_names_the_file=True),
    Key("shell_environment_policy", dict, parse=_env_policy),
    Key("plugins", dict),
    Key("mcp_servers", dict, parse=check_servers_table, parse_names_the_file=True),
    Key("permissions", dict, parse=check_permissions_table, parse_names_the_file=True),
    Key("model_prices", dict),  # agent exec --max-budget-usd (models/pricing.py)
    Key("openai_base_url", str),  # Codex's key: where the built-in OpenAI providers send requests
    Key("sandbox_workspace_write", dict),  # Codex's table: network_access, writable_roots
    # [sandbox.network]: allowed_domains, denied_domains, hosts; read layer by layer (network/lists.py)
    # so that every entry keeps where it is written, and a repository's allowed ones wait for trust
    Key("sandbox", dict, parse=check_sandbox_table),
    Key("web_search_api", dict),  # tools/web_search_api.py: a search API for servers without their own
    Key("worktree", dict, parse=check_worktree_table),  # worktrees/settings.py: set-up of a new worktree
    Key("notify", list),  # Codex's: a program run after each turn, the event's JSON as its last argument
    Key("status_line", dict),  # {type = "command", command = "..."}: Claude Code's statusLine (status_line/)
    Key("tui", dict),  # Codex's [tui] table: notifications (terminal notifications, tui/notifications.py)
    Key("lsp", (bool, dict), parse=check_lsp_table),  # false, or [lsp.NAME] tables (agent_cli/lsp/servers.py)
)
KEYS: dict[str, Key] = {
    **{
        key.name: key
        for key in (
            replace(f.metadata["key"], name=f.metadata["key"].name or f.name, field=f.name)
            for f in fields(Config)
            if "key" in f.metadata
        )
    },
    **{key.name: key for key in RAW_KEYS},
}


def find_project_config(cwd: Path) -> Path | None:
    """The nearest .agent/config.toml from cwd up to the git root, among the user's own folders
    (never above the home folder or where the owner changes; never in a folder, or a file, another
    user can write: agent_cli/ownership.py)."""
    home_config = (agent_home() / "config.toml").resolve()
    for directory in own_folders(cwd):
        candidate = directory / ".agent" / "config.toml"
        if candidate.is_file() and candidate.resolve() != home_config:
            return candidate if own_file(candidate) else None
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


def merge_tables(base: dict[str, Any], update: dict[str, Any]) -> None:
    """``update`` into ``base``: a table merges key by key, anything else replaces (TOML layers)."""
    for key, value in update.items():
        if isinstance(value, dict) and isinstance(base.get(key), dict):
            merge_tables(base[key], value)
        else:
            base[key] = value


def _check(table: dict[str, Any], origin: str, warnings: list[str] | None = None) -> None:
    for key, value in table.items():
        if key not in KEYS:
            if warnings is not None:  # tolerated so newer configs keep working, but a typo is shown
                warnings.append(f"{origin}: unknown config key `{key}` (ignored)")
            continue
        declared = KEYS[key]
        expected = declared.type
        if not isinstance(value, expected) or (expected in (int, (int, float)) and isinstance(value, bool)):
            got = f"{type(value).__name__} {value!r}"
            raise ConfigError(f"{origin}: `{key}` must be {_TYPE_NAMES[expected]}, got {got}")
        if declared.choices and value not in declared.choices:
            raise ConfigError(f"{origin}: `{key}` must be one of {', '.join(declared.choices)}; got {value!r}")
        if declared.minimum is not None and value < declared.minimum:
            raise ConfigError(f"{origin}: `{key}` must be at least {declared.minimum}; got {value}")
        if declared.maximum is not None and value > declared.maximum:
            raise ConfigError(f"{origin}: `{key}` must be at most {declared.maximum}; got {value}")
        if declared.strings and not all(isinstance(entry, str) for entry in value):
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
    for declared in KEYS.values():  # each table is a dict here: the type check above ran
        if declared.parse is not None and declared.name in table:
            try:
                declared.parse(table[declared.name], origin)
            except ValueError as exc:
                raise ConfigError(str(exc) if declared.parse_names_the_file else f"{origin}: {exc}") from None


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
    """``config`` as if the project's .agent/config.toml set only what makes the agent more careful
    (a folder not trusted yet: see agent_cli/untrusted_settings.py and agent_cli/trust/)."""
    layers = [
        replace(layer, table={k: v for k, v in layer.table.items() if not waits_for_trust(k, v)})
        if layer.kind == "project"
        else layer
        for layer in config.layers
    ]
    rebuilt = _build(config.cwd, config.agent_home, layers, config.sources, config.warnings)
    as_loaded = _build(config.cwd, config.agent_home, config.layers, (), ())
    # What a front end added after loading (agent exec --add-dir) stays.
    added = tuple(root for root in config.writable_roots if root not in as_loaded.writable_roots)
    return replace(
        rebuilt,
        writable_roots=rebuilt.writable_roots + added,
        plugin_dirs=config.plugin_dirs,
        trust_repository=config.trust_repository,
        claude_settings=config.claude_settings,
        # A model a front end chose after loading (/model) stays; the repository's waits.
        model=config.model if config.model != as_loaded.model else rebuilt.model,
        context_window=config.context_window if config.model != as_loaded.model else rebuilt.context_window,
    )


def with_model(config: Config, model: str) -> Config:
    """``config`` with another model (the one ``/model`` chose, for the TUI's ``/new`` and
    ``/resume``); a configured window stays, a looked-up one follows the model. The provider stays
    (``/model`` never changes it)."""
    return replace(config, model=model, context_window=window_for(config, model))


def window_for(config: Config, model: str) -> int:
    """The window a session on ``model`` starts from: `model_context_window`, else the model table."""
    return config.context_window if "model_context_window" in config.raw else context_window_for(model)


def _build(
    cwd: Path, home: Path, layers: Sequence[ConfigLayer], sources: Sequence[Path], warnings: Sequence[str]
) -> Config:
    merged: dict[str, Any] = {}
    for layer in layers:
        merge_tables(merged, copy.deepcopy(layer.table))

    _codex_sandbox_table(merged)
    if merged.get("web_search") == "disabled":
        merged["web_search"] = "off"
    choice = apply_choice(merged, home)  # no provider or model configured (auth/choice.py)
    if choice is not None and choice.note:
        warnings = (*warnings, choice.note)
    model = merged.get("model", DEFAULT_MODEL)
    provider = _provider(merged.get("model_provider") or default_provider_for(model), merged.get("model_providers", {}))
    if merged.get("openai_base_url") and provider.id in ("openai", "openai-chat"):
        provider = replace(provider, base_url=merged["openai_base_url"], base_url_env=None)
    if merged.get("mcp_tool_budget_percent", 0) > 100:
        raise ConfigError(
            f"`mcp_tool_budget_percent` must be between 0 and 100; got {merged['mcp_tool_budget_percent']}"
        )
    if merged.get("auto_compact_percent", 100) > 100:
        raise ConfigError(f"`auto_compact_percent` must be between 1 and 100; got {merged['auto_compact_percent']}")
    # What the layers set; a field whose key is absent keeps its default.
    settings = {
        declared.field: declared.convert(merged[name], cwd) if declared.convert else merged[name]
        for name, declared in KEYS.items()
        if declared.field is not None and name in merged
    }
    return Config(
        **{
            **settings,
            "cwd": cwd,
            "agent_home": home,
            "model": model,
            "provider": provider,
            "context_window": merged.get("model_context_window") or context_window_for(model),
            "raw": merged,
            "sources": tuple(sources),
            "warnings": tuple(warnings),
            "provider_reason": choice.reason if choice is not None else "",
            "layers": tuple(layers),
        }
    )
