"""What a repository would run on the user's machine, and a hash of it.

The hash covers exactly what can run or approve: the ``.mcp.json`` file, the ``hooks``,
``mcp_servers``, ``status_line``, ``notify``, ``permissions.allow``, ``sandbox.network.allowed_domains``
and every setting that waits for trust (all but what only makes the agent more careful:
``untrusted_settings.py``) of the project's ``.agent/config.toml``, the ``hooks``, ``statusLine``,
``permissions.allow`` and ``sandbox.network.allowedDomains`` of ``.claude/settings.json`` and
``settings.local.json``, every
file under ``.agent/plugins/``, ``.agent/hooks/`` and ``.claude/hooks/`` (the scripts hooks run), and
every file inside the repository that one of those commands names (``scripts/hook.sh``, an MCP
server's ``server.js``, a ``lint_command``'s script: command_files.py).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.config import Config
from agent_cli.context.project_doc import find_git_root, repository_root
from agent_cli.network.lists import network_table
from agent_cli.trust.command_files import digest as file_digest
from agent_cli.trust.command_files import files_of, sandboxed_commands, server_commands, unconfined_commands
from agent_cli.untrusted_settings import waiting

MCP_JSON = ".mcp.json"
CLAUDE_FILES = (Path(".claude") / "settings.json", Path(".claude") / "settings.local.json")
SCRIPT_FOLDERS = (Path(".agent") / "plugins", Path(".agent") / "hooks", Path(".claude") / "hooks")
MAX_FILES = 2_000  # a folder this large is hashed by its first files only (sorted)


@dataclass(frozen=True, slots=True)
class RepoItem:
    kind: str  # "MCP server" | "hook" | "plugin" | "allow rule" | "allowed domain" | "setting"
    name: str
    detail: str  # the command that would run, or the rule
    origin: str  # the file it comes from, relative to the folder

    def line(self) -> str:
        return f"{self.kind} {self.name}: {self.detail}  ({self.origin})"


@dataclass(frozen=True, slots=True)
class Inventory:
    folder: Path
    items: tuple[RepoItem, ...]
    digest: str
    scripts: tuple[Path, ...] = ()  # files inside the repository its commands name (hashed)


def repository_folder(cwd: Path) -> Path:
    return find_git_root(cwd) or cwd


def _json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _hook_items(hooks: Any, origin: str) -> list[RepoItem]:
    items: list[RepoItem] = []
    if not isinstance(hooks, dict):
        return items
    for event, entries in hooks.items():
        for entry in entries if isinstance(entries, list) else [entries]:
            if not isinstance(entry, dict):
                continue
            inner = entry.get("hooks") if isinstance(entry.get("hooks"), list) else [entry]
            for hook in inner:
                # a command runs here, an http hook sends the session's data out, a prompt one a request
                target = isinstance(hook, dict) and (hook.get("command") or hook.get("url") or hook.get("prompt"))
                if target:
                    items.append(RepoItem("hook", str(event), str(target), origin))
    return items


def _command_items(table: dict[str, Any], origin: str) -> list[RepoItem]:
    """A status line command (Claude's ``statusLine``, our ``status_line``) and Codex's ``notify``."""
    items = []
    for key in ("statusLine", "status_line"):
        line = table.get(key)
        if isinstance(line, dict) and line.get("command"):
            items.append(RepoItem("status line", key, str(line["command"]), origin))
    notify = table.get("notify")
    if isinstance(notify, list) and notify:
        items.append(RepoItem("notify", "notify", " ".join(map(str, notify)), origin))
    return items


def _server_items(servers: Any, origin: str) -> list[RepoItem]:
    items: list[RepoItem] = []
    for name, entry in (servers or {}).items() if isinstance(servers, dict) else ():
        if isinstance(entry, dict):
            target = entry.get("url") or " ".join([str(entry.get("command", "")), *map(str, entry.get("args") or [])])
            if target.strip():
                items.append(RepoItem("MCP server", str(name), target.strip(), origin))
    return items


def _allow_items(permissions: Any, origin: str) -> list[RepoItem]:
    allow = permissions.get("allow") if isinstance(permissions, dict) else None
    return [
        RepoItem("allow rule", str(rule), "runs without asking", origin)
        for rule in allow or []
        if isinstance(rule, str)
    ]


def claude_allowed_domains(data: Any) -> Any:
    sandbox = data.get("sandbox") if isinstance(data, dict) else None
    network = sandbox.get("network") if isinstance(sandbox, dict) else None
    return network.get("allowedDomains") if isinstance(network, dict) else None


def _domain_items(domains: Any, origin: str) -> list[RepoItem]:
    """The repository's allowed domains: sandboxed commands could reach them without asking."""
    return [
        RepoItem("allowed domain", domain, "commands reach it without asking", origin)
        for domain in (domains if isinstance(domains, list) else [])
        if isinstance(domain, str)
    ]


def take_inventory(config: Config) -> Inventory:
    folder = repository_folder(config.cwd)
    if repository_root(config.cwd) is None:
        return Inventory(folder, (), "")  # a folder another user can write: none of its files is read
    items: list[RepoItem] = []
    digest = hashlib.sha256()

    def feed(label: str, content: object) -> None:
        digest.update(label.encode() + b"\0" + json.dumps(content, sort_keys=True, default=str).encode() + b"\0")

    commands: list[str | list[str]] = []
    mcp_json = folder / MCP_JSON
    if mcp_json.is_file():
        servers = _json(mcp_json).get("mcpServers")
        items += _server_items(servers, MCP_JSON)
        commands += server_commands(servers)
        feed(MCP_JSON, mcp_json.read_bytes().decode("utf-8", "replace"))
    for layer in config.layers:
        if layer.kind == "project" and layer.path is not None:
            origin = str(layer.path.relative_to(folder)) if layer.path.is_relative_to(folder) else str(layer.path)
            table = {key: layer.table.get(key) for key in ("hooks", "mcp_servers", "status_line", "notify")}
            table["allow"] = (layer.table.get("permissions") or {}).get("allow")
            items += _hook_items(table["hooks"], origin) + _server_items(table["mcp_servers"], origin)
            items += _command_items(layer.table, origin)
            items += _allow_items(layer.table.get("permissions"), origin)
            if domains := network_table(layer.table).get("allowed_domains"):
                items += _domain_items(domains, origin)
                table["allowed_domains"] = domains  # only when there are some: other folders' hashes stay
            settings = waiting(layer.table)  # all but what only makes the agent more careful
            items += [
                RepoItem("setting", key, json.dumps(value, default=str), origin) for key, value in settings.items()
            ]
            if settings:
                table["settings"] = settings
            commands += [*unconfined_commands(layer.table), *sandboxed_commands(layer.table)]
            feed(origin, table)
    home_claude = (folder / ".claude").resolve() == (Path.home() / ".claude").resolve()  # ~ itself: the user's own
    for relative in CLAUDE_FILES:
        if (folder / relative).is_file() and not home_claude:
            data = _json(folder / relative)
            items += _hook_items(data.get("hooks"), str(relative)) + _allow_items(
                data.get("permissions"), str(relative)
            )
            items += _command_items(data, str(relative))
            commands += unconfined_commands(data)
            fed = {
                "hooks": data.get("hooks"),
                "allow": (data.get("permissions") or {}).get("allow"),
                "statusLine": data.get("statusLine"),
            }
            if domains := claude_allowed_domains(data):
                items += _domain_items(domains, str(relative))
                fed["allowedDomains"] = domains  # only when there are some: other folders' hashes stay
            feed(str(relative), fed)
    user_level = (folder / ".agent").resolve() == Path(config.agent_home).resolve()  # agent run in ~ without git
    plugins = folder / SCRIPT_FOLDERS[0]
    if plugins.is_dir() and not user_level:
        for child in sorted(plugins.iterdir()):
            if (child / ".claude-plugin" / "plugin.json").is_file():
                items.append(
                    RepoItem(
                        "plugin", child.name, "its hooks, MCP servers and commands", str(child.relative_to(folder))
                    )
                )
    for relative in SCRIPT_FOLDERS:
        if user_level and relative.parts[0] == ".agent":
            continue
        files = (
            sorted(path for path in (folder / relative).rglob("*") if path.is_file())
            if (folder / relative).is_dir()
            else []
        )
        for path in files[:MAX_FILES]:
            try:
                feed(str(path.relative_to(folder)), hashlib.sha256(path.read_bytes()).hexdigest())
            except OSError:
                continue
    scripts = files_of(commands, folder)
    for path in scripts:  # what the commands run: a rewritten script is a new question
        feed(f"script {path.relative_to(Path(folder).resolve())}", file_digest(path))
    return Inventory(folder, tuple(items), digest.hexdigest() if items else "", tuple(scripts))


def unconfined_scripts(config: Config) -> list[Path]:
    """The files inside the working folder's repository that the agent runs outside the sandbox,
    whoever configured the command (the repository, the user, -c): the sandbox keeps them read-only."""
    folder = repository_root(config.cwd) or config.cwd
    commands: list[str | list[str]] = []
    for layer in config.layers:
        commands += unconfined_commands(layer.table)
    for path in (Path.home() / ".claude" / "settings.json", *(folder / relative for relative in CLAUDE_FILES)):
        if path.is_file():
            commands += unconfined_commands(_json(path))
    if (folder / MCP_JSON).is_file():
        commands += server_commands(_json(folder / MCP_JSON).get("mcpServers"))
    return files_of(commands, folder)
