"""``agent mcp list | get NAME | add NAME ... | remove NAME``: the MCP servers the agent runs.

``add`` and ``remove`` edit ``$AGENT_HOME/config.toml`` in place with tomlkit, so its comments
and layout survive. ``list`` and ``get`` show every server a session in this directory would
run: the config layers' ``[mcp_servers]`` and the repository's ``.mcp.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path

from agent_cli.config import ConfigError, load_config
from agent_cli.context.project_doc import repository_root
from agent_cli.headless.common import USAGE_ERROR, fail
from agent_cli.mcp.config import McpConfigError, check_servers_table, configured_servers
from agent_cli.mcp.connection import describe_error
from agent_cli.mcp.oauth import LoginRequired, login, token_file, uses_oauth
from agent_cli.mcp.toolset import plugin_servers
from agent_cli.paths import agent_home
from agent_cli.plugins.loader import load_plugins_for
from agent_cli.trust.gate import trust_state

USAGE = """usage: agent mcp list [--json] [--plugin-dir DIR]...
       agent mcp get NAME [--json] [--plugin-dir DIR]...
       agent mcp add NAME [--env KEY=VALUE]... [--cwd DIR] -- COMMAND [ARGS...]
       agent mcp add NAME --url URL [--bearer-token-env-var VAR] [--header KEY=VALUE]...
       agent mcp remove NAME
       agent mcp login NAME [--no-browser]
       agent mcp logout NAME"""


def run_mcp(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(USAGE)
        return 0 if argv else USAGE_ERROR
    command, rest = argv[0], argv[1:]
    if command == "list":
        return list_servers(rest)
    if command == "get":
        return get_server(rest)
    if command == "add":
        return add_server(rest)
    if command == "remove":
        return remove_server(rest)
    if command in ("login", "logout"):
        return login_command(command, rest)
    fail(f"unknown mcp command {command!r}\n{USAGE}")
    return USAGE_ERROR


def config_path() -> Path:
    return agent_home() / "config.toml"


def session_servers(plugin_dirs: Iterable[str] = ()):
    """What a session started here (with these ``--plugin-dir``) would run, and the warnings it would show."""
    try:
        config = replace(
            load_config(), plugin_dirs=tuple(Path(folder).expanduser().resolve() for folder in plugin_dirs)
        )
        sources = ", ".join(str(path) for path in config.sources) or "config"
        plugins = plugin_servers(load_plugins_for(config))
        return configured_servers(config.raw, repository_root(config.cwd), sources, plugins)
    except (ConfigError, McpConfigError) as exc:
        fail(f"configuration error: {exc}")


def describe(spec) -> dict:
    data = {
        "name": spec.name,
        "transport": spec.transport,
        "enabled": spec.enabled,
        "scope": spec.scope,
        "origin": spec.origin,
        "startup_timeout_sec": spec.startup_timeout_sec,
        "tool_timeout_sec": spec.tool_timeout_sec,
    }
    if spec.transport == "stdio":
        data.update(command=spec.command, args=list(spec.args), env=sorted(spec.env), cwd=spec.cwd)
    else:
        data.update(url=spec.url, headers=sorted(spec.headers), bearer_token_env_var=spec.bearer_token_env_var)
        if spec.oauth_client_id or spec.oauth_callback_port or spec.oauth_scopes:
            data["oauth"] = {
                "client_id": spec.oauth_client_id,
                "callback_port": spec.oauth_callback_port,
                "scopes": list(spec.oauth_scopes),
            }
        if uses_oauth(spec):
            data["login"] = token_file(spec).state().replace("needs login", "not logged in")
    if spec.enabled_tools is not None:
        data["enabled_tools"] = list(spec.enabled_tools)
    if spec.disabled_tools:
        data["disabled_tools"] = list(spec.disabled_tools)
    return data


def add_plugin_dir(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--plugin-dir",
        dest="plugin_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="also the plugin in DIR, or every plugin in its subfolders (as for a session)",
    )


def list_servers(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="agent mcp list")
    parser.add_argument("--json", action="store_true")
    add_plugin_dir(parser)
    args = parser.parse_args(argv)
    servers = session_servers(args.plugin_dirs)
    for warning in servers.warnings:
        print(f"warning: {warning}", file=sys.stderr)
    if args.json:
        print(json.dumps([describe(spec) for spec in servers.specs], indent=2))
        return 0
    if not servers.specs:
        print("no MCP servers configured; add one with: agent mcp add NAME -- COMMAND [ARGS...]")
        return 0
    width = max(len(spec.name) for spec in servers.specs) + 2
    waiting = untrusted_servers()
    for spec in servers.specs:
        state = "" if spec.enabled else "  (disabled)"
        if spec.enabled and spec.name in waiting:
            state = "  (this folder is not trusted: it does not start)"
        if spec.enabled and uses_oauth(spec) and token_file(spec).state() != "needs login":
            state = f"  ({token_file(spec).state()})"  # no login shown: the server may need none
        print(f"{spec.name.ljust(width)}{spec.transport:<7}{spec.target}{state}")
    return 0


def untrusted_servers() -> set[str]:
    """The names of the folder's own MCP servers a session here leaves out until it is trusted."""
    try:
        state = trust_state(load_config())
    except ConfigError:
        return set()
    return set() if state.trusted else {item.name for item in state.inventory.items if item.kind == "MCP server"}


def get_server(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="agent mcp get")
    parser.add_argument("name")
    parser.add_argument("--json", action="store_true")
    add_plugin_dir(parser)
    args = parser.parse_args(argv)
    spec = next((s for s in session_servers(args.plugin_dirs).specs if s.name == args.name), None)
    if spec is None:
        fail(f"no MCP server named {args.name!r} (agent mcp list shows them)")
    data = describe(spec)
    if args.json:
        print(json.dumps(data, indent=2))
    else:
        for key, value in data.items():
            if value not in (None, [], {}):
                print(f"{key}: {', '.join(map(str, value)) if isinstance(value, list) else value}")
    return 0


def login_command(command: str, argv: list[str]) -> int:
    """``login``: sign in with the browser (the URL is printed too); ``logout``: forget the tokens."""
    parser = argparse.ArgumentParser(prog=f"agent mcp {command}")
    parser.add_argument("name")
    if command == "login":
        parser.add_argument("--no-browser", action="store_true", help="only print the URL to open")
    add_plugin_dir(parser)
    args = parser.parse_args(argv)
    spec = next((s for s in session_servers(args.plugin_dirs).specs if s.name == args.name), None)
    if spec is None:
        fail(f"no MCP server named {args.name!r} (agent mcp list shows them)")
    if not uses_oauth(spec):
        fail(f"MCP server {spec.name!r} does not log in with OAuth (a stdio server, or one with its own token)")
    if command == "logout":
        removed = token_file(spec).remove()
        print(f"logged out of {spec.name}" if removed else f"not logged in to {spec.name}")
        return 0
    try:
        asyncio.run(login(spec, lambda line: print(line, flush=True), open_browser=not args.no_browser))
    except (LoginRequired, Exception) as exc:  # noqa: BLE001 - the SDK's flow errors are many
        fail(f"login to {spec.name} failed: {describe_error(exc)}")
    print(f"logged in to {spec.name}; the token is stored in {token_file(spec).path}")
    return 0


def pairs(values: list[str], flag: str) -> dict[str, str]:
    out = {}
    for value in values:
        key, sep, rest = value.partition("=")
        if not sep or not key:
            fail(f"{flag} expects KEY=VALUE, got {value!r}")
        out[key] = rest
    return out


def add_server(argv: list[str]) -> int:
    options, command = (argv[: argv.index("--")], argv[argv.index("--") + 1 :]) if "--" in argv else (argv, [])
    parser = argparse.ArgumentParser(prog="agent mcp add", usage=USAGE.split("\n", 1)[1].strip())
    parser.add_argument("name")
    parser.add_argument("--env", action="append", default=[], metavar="KEY=VALUE")
    parser.add_argument("--cwd")
    parser.add_argument("--url")
    parser.add_argument("--bearer-token-env-var")
    parser.add_argument("--header", action="append", default=[], metavar="KEY=VALUE")
    args = parser.parse_args(options)
    if bool(command) == bool(args.url):
        fail("give either `-- COMMAND [ARGS...]` (a stdio server) or `--url URL` (an HTTP server)")
    # Dropping an option of the other transport silently would leave a server without its token or env.
    stdio_only = [name for name, given in (("--env", args.env), ("--cwd", args.cwd)) if given]
    http_only = [
        name
        for name, given in (("--bearer-token-env-var", args.bearer_token_env_var), ("--header", args.header))
        if given
    ]
    if args.url and stdio_only:
        fail(f"{', '.join(stdio_only)}: apply only to stdio servers (`-- COMMAND`)")
    if command and http_only:
        fail(f"{', '.join(http_only)}: apply only to HTTP servers (`--url URL`)")
    entry: dict[str, object] = {}
    if command:
        entry = {"command": command[0], "args": command[1:]}
        if env := pairs(args.env, "--env"):
            entry["env"] = env
        if args.cwd:
            entry["cwd"] = args.cwd
    else:
        entry = {"url": args.url}
        if args.bearer_token_env_var:
            entry["bearer_token_env_var"] = args.bearer_token_env_var
        if headers := pairs(args.header, "--header"):
            entry["http_headers"] = headers
    path = config_path()
    doc = read_document(path)
    servers = doc.get("mcp_servers")
    if servers is not None and args.name in servers:
        fail(f"{path}: `mcp_servers.{args.name}` already exists; remove it first (agent mcp remove {args.name})")

    try:
        check_servers_table({args.name: entry}, str(path))
    except McpConfigError as exc:
        fail(str(exc))
    import tomlkit

    if servers is None:
        servers = tomlkit.table(is_super_table=True)
        doc["mcp_servers"] = servers
    table = tomlkit.table()
    for key, value in entry.items():
        if isinstance(value, dict):  # env = { KEY = "value" } on one line
            inline = tomlkit.inline_table()
            inline.update(value)
            value = inline
        table[key] = value
    servers[args.name] = table
    write_document(path, doc)
    print(f"added MCP server {args.name!r} to {path}")
    return 0


def remove_server(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="agent mcp remove")
    parser.add_argument("name")
    args = parser.parse_args(argv)
    path = config_path()
    doc = read_document(path)
    servers = doc.get("mcp_servers")
    if servers is None or args.name not in servers:
        elsewhere = next((s for s in session_servers().specs if s.name == args.name), None)
        where = f"; it is defined in {elsewhere.origin}" if elsewhere else ""
        fail(f"{path} has no `mcp_servers.{args.name}`{where}")
    del servers[args.name]
    if not servers:
        del doc["mcp_servers"]
    write_document(path, doc)
    print(f"removed MCP server {args.name!r} from {path}")
    return 0


def read_document(path: Path):
    import tomlkit

    try:
        return tomlkit.parse(path.read_text(encoding="utf-8")) if path.is_file() else tomlkit.document()
    except (OSError, UnicodeDecodeError, tomlkit.exceptions.ParseError) as exc:
        fail(f"{path}: cannot edit it: {exc}")


def write_document(path: Path, doc) -> None:
    import tomlkit

    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(tomlkit.dumps(doc), encoding="utf-8")
