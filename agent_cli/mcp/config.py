"""Which MCP servers to run: Codex's ``[mcp_servers.<name>]`` tables and Claude Code's ``.mcp.json``.

Both shapes become :class:`ServerSpec`. Nothing here imports the ``mcp`` SDK, so reading the
configuration costs a session with no server nothing. A bad entry raises :class:`McpConfigError`
naming the file and the key.

``.mcp.json`` (``{"mcpServers": {name: {...}}}``) expands ``${VAR}`` and ``${VAR:-default}`` in
``command``, ``args``, ``env``, ``url`` and ``headers``; callers may pass extra variables (a
plugin passes ``CLAUDE_PLUGIN_ROOT``). A ``[mcp_servers.<name>]`` table that has neither
``command`` nor ``url`` only overrides settings (``enabled``, timeouts, tool filters) of a server
defined elsewhere, e.g. in ``.mcp.json``.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

MCP_JSON = ".mcp.json"
DEFAULT_STARTUP_TIMEOUT = 10.0
DEFAULT_TOOL_TIMEOUT = 60.0
SERVER_NAME = re.compile(r"^[A-Za-z0-9_-]+$")
_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_OVERRIDE_KEYS = (
    "enabled",
    "startup_timeout_sec",
    "tool_timeout_sec",
    "enabled_tools",
    "disabled_tools",
    "elicitation_values",
)
_KEY_TYPES: dict[str, tuple[type | tuple[type, ...], str]] = {
    "command": (str, "a string"),
    "args": (list, "an array of strings"),
    "env": (dict, "a table of strings"),
    "cwd": (str, "a string"),
    "url": (str, "a string"),
    "bearer_token_env_var": (str, "a string"),
    "http_headers": (dict, "a table of strings"),
    "enabled": (bool, "a boolean"),
    "startup_timeout_sec": ((int, float), "a number of seconds"),
    "tool_timeout_sec": ((int, float), "a number of seconds"),
    "enabled_tools": (list, "an array of strings"),
    "disabled_tools": (list, "an array of strings"),
    "scopes": (list, "an array of strings"),
    "oauth": (dict, "a table (client_id, callback_port, scopes)"),
    "elicitation_values": (dict, "a table of strings"),
}
_OAUTH_KEYS = {"client_id": str, "callback_port": int, "scopes": list, "clientId": str, "callbackPort": int}

Transport = Literal["stdio", "http", "sse", "sdk"]  # sdk: a server the host program runs (stream_json/)


class McpConfigError(ValueError):
    """A bad server entry; the message names the file and the key."""


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One MCP server to run, whatever file it came from."""

    name: str
    transport: Transport
    origin: str  # where it was defined, for messages: "<file>: `mcp_servers.x`"
    scope: str = "user"  # user | project (.agent/config.toml or .mcp.json) | plugin:<name> | ...
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = field(default_factory=dict)
    bearer_token_env_var: str | None = None
    enabled: bool = True
    startup_timeout_sec: float = DEFAULT_STARTUP_TIMEOUT
    tool_timeout_sec: float = DEFAULT_TOOL_TIMEOUT
    enabled_tools: tuple[str, ...] | None = None  # None: every tool
    disabled_tools: tuple[str, ...] = ()
    host_transport: Callable[[], Any] | None = field(default=None, compare=False)  # "sdk": the MCP transport to it
    oauth_client_id: str | None = None  # pre-registered at the authorization server: no dynamic registration
    oauth_callback_port: int | None = None  # the loopback port that client's redirect URI names
    oauth_scopes: tuple[str, ...] = ()
    elicitation_values: Mapping[str, str] = field(default_factory=dict)  # answers where nobody can be asked

    @property
    def target(self) -> str:
        """What runs, for people: the command line or the URL."""
        if self.transport == "stdio":
            return " ".join([self.command or "", *self.args]).strip()
        return self.url or ""

    def offers(self, tool: str) -> bool:
        """Whether ``tool`` passes ``enabled_tools`` / ``disabled_tools``."""
        if self.enabled_tools is not None and tool not in self.enabled_tools:
            return False
        return tool not in self.disabled_tools


# --- Codex shape: [mcp_servers.<name>] ------------------------------------------------------


def check_servers_table(table: Any, origin: str) -> None:
    """Type-check one config layer's ``mcp_servers`` table (raises McpConfigError)."""
    if not isinstance(table, dict):
        raise McpConfigError(f"{origin}: `mcp_servers` must be a table of servers")
    for name, entry in table.items():
        _check_entry(name, entry, origin)


def _check_entry(name: str, entry: Any, origin: str) -> None:
    where = f"{origin}: `mcp_servers.{name}`"
    if not SERVER_NAME.match(name):
        raise McpConfigError(f"{where}: server names may use letters, digits, '_' and '-'")
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where} must be a table")
    for key, value in entry.items():
        at = f"{origin}: `mcp_servers.{name}.{key}`"
        if key not in _KEY_TYPES:
            raise McpConfigError(f"{at}: unknown key (expected one of: {', '.join(_KEY_TYPES)})")
        expected, description = _KEY_TYPES[key]
        wrong = not isinstance(value, expected) or isinstance(value, bool) and expected is not bool
        if isinstance(value, list):
            wrong = wrong or not all(isinstance(item, str) for item in value)
        if isinstance(value, dict) and key == "oauth":
            wrong = wrong or _oauth_problem(value) is not None
        elif isinstance(value, dict):
            wrong = wrong or not all(isinstance(item, str) for item in value.values())
        if wrong:
            raise McpConfigError(f"{at} must be {description}, got {value!r}")
        if key.endswith("_sec") and isinstance(value, (int, float)) and value <= 0:
            raise McpConfigError(f"{at} must be a positive number of seconds, got {value!r}")
    if "command" in entry and "url" in entry:
        raise McpConfigError(f"{where}: set `command` (a stdio server) or `url` (an HTTP server), not both")
    check_url(entry.get("url"), f"{origin}: `mcp_servers.{name}.url`")


def _oauth_problem(table: Any) -> str | None:
    """Why an ``oauth`` table (Codex's keys or Claude Code's) is wrong, or None."""
    if not isinstance(table, dict):
        return "must be a table"
    for key, value in table.items():
        expected = _OAUTH_KEYS.get(key)
        if expected is None:
            return f"unknown key {key!r}"
        if not isinstance(value, expected) or isinstance(value, bool):
            return f"{key} must be {expected.__name__}"
    return None


def _oauth_fields(entry: Mapping[str, Any]) -> dict[str, Any]:
    """ServerSpec's oauth fields from ``oauth = {...}`` and ``scopes = [...]``."""
    table = entry.get("oauth") or {}
    scopes = table.get("scopes", entry.get("scopes", ()))
    return {
        "oauth_client_id": table.get("client_id", table.get("clientId")),
        "oauth_callback_port": table.get("callback_port", table.get("callbackPort")),
        "oauth_scopes": tuple(str(scope) for scope in scopes),
    }


def check_url(url: object, at: str) -> None:
    """A URL without its scheme would only fail when the server starts, with an HTTP library's words."""
    if isinstance(url, str) and not url.startswith(("http://", "https://")):
        raise McpConfigError(f"{at} must start with http:// or https://, got {url!r}")


def servers_from_table(
    table: dict[str, Any], origin: str, scope: str = "user"
) -> tuple[list[ServerSpec], dict[str, dict]]:
    """Specs for the complete entries of a merged ``mcp_servers`` table, and the override-only ones."""
    check_servers_table(table, origin)
    specs: list[ServerSpec] = []
    overrides: dict[str, dict] = {}
    for name, entry in table.items():
        if "command" not in entry and "url" not in entry:
            overrides[name] = entry
            continue
        where = f"{origin}: `mcp_servers.{name}`"
        specs.append(
            _apply_overrides(
                ServerSpec(
                    name=name,
                    transport="stdio" if "command" in entry else "http",
                    origin=where,
                    scope=scope,
                    command=entry.get("command"),
                    args=tuple(entry.get("args", ())),
                    env=dict(entry.get("env", {})),
                    cwd=entry.get("cwd"),
                    url=entry.get("url"),
                    headers=dict(entry.get("http_headers", {})),
                    bearer_token_env_var=entry.get("bearer_token_env_var"),
                    **_oauth_fields(entry),
                ),
                entry,
            )
        )
    return specs, overrides


def _apply_overrides(spec: ServerSpec, entry: Mapping[str, Any]) -> ServerSpec:
    changes: dict[str, Any] = {key: entry[key] for key in _OVERRIDE_KEYS if key in entry}
    for key in ("startup_timeout_sec", "tool_timeout_sec"):
        if key in changes:
            changes[key] = float(changes[key])
    for key in ("enabled_tools", "disabled_tools"):
        if key in changes:
            changes[key] = tuple(changes[key])
    return replace(spec, **changes) if changes else spec


# --- Claude Code shape: .mcp.json -------------------------------------------------------------


def expand_variables(text: str, variables: Mapping[str, str], where: str) -> str:
    """``${VAR}`` and ``${VAR:-default}``; an unset variable without a default is an error."""

    def substitute(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        value = variables.get(name)
        if value:
            return value
        if default is not None:
            return default
        if value is not None:
            return value
        raise McpConfigError(f"{where}: ${{{name}}} is not set (write ${{{name}:-default}} for a default)")

    return _VARIABLE.sub(substitute, text)


def parse_mcp_json(
    data: Any, origin: str, variables: Mapping[str, str] | None = None, scope: str = "project"
) -> tuple[list[ServerSpec], list[str]]:
    """Servers of a parsed ``.mcp.json`` document, and a warning for each entry that is bad.

    ``variables`` are used for ``${VAR}`` before the environment (a plugin passes
    ``{"CLAUDE_PLUGIN_ROOT": ...}``). A bad entry is skipped with a warning naming the file and
    the key, so one broken server does not stop the others.
    """
    if not isinstance(data, dict) or not isinstance(data.get("mcpServers", {}), dict):
        raise McpConfigError(f"{origin}: expected an object with an `mcpServers` object")
    lookup = {**os.environ, **(variables or {})}
    specs: list[ServerSpec] = []
    warnings: list[str] = []
    for name, entry in data.get("mcpServers", {}).items():
        try:
            specs.append(_json_entry(name, entry, origin, lookup, scope))
        except McpConfigError as exc:
            warnings.append(f"{exc}; server skipped")
    return specs, warnings


def load_mcp_json(
    path: Path, variables: Mapping[str, str] | None = None, scope: str = "project"
) -> tuple[list[ServerSpec], list[str]]:
    """:func:`parse_mcp_json` for a file; a file that is not valid JSON is one warning."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        return [], [f"{path}: cannot read MCP servers: {exc}"]
    try:
        return parse_mcp_json(data, str(path), variables, scope)
    except McpConfigError as exc:
        return [], [str(exc)]


def _json_entry(name: str, entry: Any, origin: str, lookup: Mapping[str, str], scope: str) -> ServerSpec:
    where = f"{origin}: `mcpServers.{name}`"

    def at(key: str) -> str:
        return f"{origin}: `mcpServers.{name}.{key}`"

    if not SERVER_NAME.match(name):
        raise McpConfigError(f"{where}: server names may use letters, digits, '_' and '-'")
    if not isinstance(entry, dict):
        raise McpConfigError(f"{where} must be an object")
    kind = entry.get("type", "http" if "url" in entry and "command" not in entry else "stdio")
    if kind not in ("stdio", "http", "sse"):
        raise McpConfigError(f"{at('type')} must be stdio, http or sse, got {kind!r}")

    def text(key: str) -> str | None:
        value = entry.get(key)
        if value is None:
            return None
        if not isinstance(value, str):
            raise McpConfigError(f"{at(key)} must be a string, got {value!r}")
        return expand_variables(value, lookup, at(key))

    def strings(key: str) -> dict[str, str]:
        value = entry.get(key, {})
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise McpConfigError(f"{at(key)} must be an object of strings, got {value!r}")
        return {k: expand_variables(v, lookup, at(f"{key}.{k}")) for k, v in value.items()}

    if kind == "stdio":
        args = entry.get("args", [])
        if not isinstance(args, list) or not all(isinstance(arg, str) for arg in args):
            raise McpConfigError(f"{at('args')} must be an array of strings, got {args!r}")
        command = text("command")
        if not command:
            raise McpConfigError(f"{at('command')} is missing")
        return ServerSpec(
            name,
            "stdio",
            where,
            scope,
            command=command,
            args=tuple(expand_variables(arg, lookup, at("args")) for arg in args),
            env=strings("env"),
            cwd=text("cwd"),
        )
    url = text("url")
    if not url:
        raise McpConfigError(f"{at('url')} is missing")
    check_url(url, at("url"))
    problem = _oauth_problem(entry.get("oauth", {}))
    if problem:
        raise McpConfigError(f"{at('oauth')}: {problem}")
    return ServerSpec(name, kind, where, scope, url=url, headers=strings("headers"), **_oauth_fields(entry))


# --- everything a session runs ----------------------------------------------------------------


@dataclass
class ServerList:
    specs: list[ServerSpec]
    warnings: list[str]


def configured_servers(
    raw: Mapping[str, Any], project_root: Path | None, sources: str = "config", extra: ServerList | None = None
) -> ServerList:
    """The servers of a merged config (``raw``), the project's ``.mcp.json``, then ``extra`` (the plugins').

    The first definition of a name wins; an override-only ``[mcp_servers.<name>]`` table patches
    a server defined in ``.mcp.json`` or a plugin (``enabled = false`` turns it off).
    """
    table = raw.get("mcp_servers") or {}
    specs, overrides = servers_from_table(table, sources)
    warnings: list[str] = []
    mcp_json = project_root / MCP_JSON if project_root is not None else None  # None: an untrusted folder
    if mcp_json is not None and mcp_json.is_file():
        project, problems = load_mcp_json(mcp_json)
        warnings += problems
        specs += project
    if extra is not None:
        specs += extra.specs
        warnings += extra.warnings
    by_name: dict[str, ServerSpec] = {}
    for spec in specs:
        by_name.setdefault(spec.name, spec)
    for name, entry in overrides.items():
        if name in by_name:
            by_name[name] = _apply_overrides(by_name[name], entry)
        else:
            warnings.append(
                f"{sources}: `mcp_servers.{name}` has no `command` or `url` and no server "
                f"of that name is defined elsewhere; ignored"
            )
    return ServerList(list(by_name.values()), warnings)
