"""The allowed and denied domains in force, and where each entry is written.

Read unchanged from where they already are, in this order:

1. ``~/.claude/settings.json``: ``sandbox.network.allowedDomains`` / ``deniedDomains``;
2. ``$AGENT_HOME/config.toml``: ``[sandbox.network] allowed_domains`` / ``denied_domains``;
3. the project's ``.claude/settings.json`` and ``.claude/settings.local.json`` (as in 1);
4. the project's ``.agent/config.toml`` (as in 2);
5. ``-c sandbox.network.allowed_domains=[...]``;

and the ``WebFetch(domain:…)`` allow and deny permission rules of all of them (Claude Code counts
them as allowed and denied domains). The repository's own entries (3, 4) are denied at once but
allowed only once the folder is trusted: a cloned repository cannot open the network for itself.
A denied entry wins over every allowed one.

``[sandbox.network] hosts`` (names the proxy resolves to given addresses, like a hosts file) is
read from the user's own settings only (2, 5).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent_cli.network.domains import DomainEntry, DomainError, normalize_host, parse_entry

CLAUDE_KEYS = {"allowed": "allowedDomains", "denied": "deniedDomains"}
OUR_KEYS = {"allowed": "allowed_domains", "denied": "denied_domains"}
TABLE_KEYS = (*OUR_KEYS.values(), "hosts")


class Layer(Protocol):
    """One table of the merged config and where it came from (config.py's ConfigLayer)."""

    @property
    def kind(self) -> str: ...  # user | project | override | flags
    @property
    def origin(self) -> str: ...
    @property
    def table(self) -> dict[str, Any]: ...


class Rule(Protocol):
    """A permission rule (permissions/rules.py; named here because permissions/ sits above tools/,
    which this package serves)."""

    @property
    def kind(self) -> str: ...  # allow | ask | deny
    @property
    def text(self) -> str: ...
    @property
    def tool(self) -> str: ...  # Claude Code's name: WebFetch
    @property
    def specifier(self) -> str | None: ...  # domain:example.com
    @property
    def source(self) -> str: ...
    @property
    def repository(self) -> bool: ...


@dataclass(frozen=True)
class NetworkLists:
    allowed: tuple[DomainEntry, ...] = ()  # in force
    denied: tuple[DomainEntry, ...] = ()
    waiting: tuple[DomainEntry, ...] = ()  # the repository's allowed entries, until the folder is trusted
    hosts: dict[str, str] = field(default_factory=dict)  # name -> address, for the proxy's resolver
    warnings: tuple[str, ...] = ()

    def denial(self, host: str, port: int) -> DomainEntry | None:
        return next((entry for entry in self.denied if entry.matches(host, port)), None)

    def allowance(self, host: str, port: int) -> DomainEntry | None:
        """The entry that allows ``host``: an exact one first (it also allows private addresses)."""
        found = [entry for entry in self.allowed if entry.matches(host, port)]
        return next((entry for entry in found if entry.exact), found[0] if found else None)


def check_sandbox_table(table: Any, origin: str) -> None:
    """The ``[sandbox]`` table of config.toml (config.py calls it). Raises ValueError."""
    if not isinstance(table, dict):
        raise ValueError("`sandbox` must be a table")
    unknown = sorted(set(table) - {"network"})
    if unknown:
        raise ValueError(f"unknown key `sandbox.{unknown[0]}` (known: sandbox.network)")
    network = table.get("network", {})
    if not isinstance(network, dict):
        raise ValueError("`sandbox.network` must be a table")
    for key, value in network.items():
        if key not in TABLE_KEYS:
            raise ValueError(f"unknown key `sandbox.network.{key}` (known: {', '.join(TABLE_KEYS)})")
        if key == "hosts":
            _check_hosts(value)
            continue
        if not isinstance(value, list):
            raise ValueError(f"`sandbox.network.{key}` must be an array of domains")
        for text in value:
            try:
                parse_entry(text, origin)
            except DomainError as exc:
                raise ValueError(f"`sandbox.network.{key}`: {exc}") from None


def _check_hosts(value: Any) -> None:
    import ipaddress

    if not isinstance(value, dict):
        raise ValueError('`sandbox.network.hosts` must be a table of names and addresses: {"pypi.test" = "127.0.0.1"}')
    for name, address in value.items():
        try:
            normalize_host(name)
            ipaddress.ip_address(address)
        except (DomainError, ValueError, TypeError):
            raise ValueError(f"`sandbox.network.hosts`: {name!r} = {address!r} is not a name and an address") from None


def network_table(table: dict[str, Any]) -> dict[str, Any]:
    sandbox = table.get("sandbox")
    network = sandbox.get("network") if isinstance(sandbox, dict) else None
    return network if isinstance(network, dict) else {}


@dataclass
class _Collected:
    allowed: list[DomainEntry] = field(default_factory=list)
    denied: list[DomainEntry] = field(default_factory=list)
    waiting: list[DomainEntry] = field(default_factory=list)
    hosts: dict[str, str] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)

    def add(self, kind: str, entries: Any, source: str, repository: bool, trusted: bool) -> None:
        if entries is None:
            return
        if not isinstance(entries, list):
            self.warnings.append(f"{source}: expected a list of domains; ignored")
            return
        for text in entries:
            try:
                entry = parse_entry(text, source, repository)
            except DomainError as exc:
                self.warnings.append(f"{source}: {exc}; ignored")
                continue
            if kind == "denied":
                self.denied.append(entry)
            elif repository and not trusted:
                self.waiting.append(entry)
            else:
                self.allowed.append(entry)


def read_lists(
    layers: Sequence[Layer],
    project: Path,
    rules: Iterable[Rule],
    trusted: bool,
    claude_settings: Sequence[str] = ("user", "project", "local"),
) -> NetworkLists:
    """Every entry in force for the project folder ``project``, and the ones that wait for trust.
    ``rules``: the permission rules loaded for the session (their WebFetch domain rules count)."""
    found = _Collected()
    home_claude = Path.home() / ".claude"
    order: list[tuple[Path | Layer, bool]] = []  # a Claude Code settings file or one of our layers
    if "user" in claude_settings:
        order.append((home_claude / "settings.json", False))
    order += [(layer, False) for layer in layers if layer.kind == "user"]
    if (project / ".claude").resolve() != home_claude.resolve():  # in ~ they are the user's own
        for kind, name in (("project", "settings.json"), ("local", "settings.local.json")):
            if kind in claude_settings:
                order.append((project / ".claude" / name, True))
    order += [(layer, True) for layer in layers if layer.kind == "project"]
    order += [(layer, False) for layer in layers if layer.kind == "override"]
    for where, repository in order:
        if isinstance(where, Path):
            _add_claude_file(found, where, repository, trusted)
        else:
            _add_layer(found, where, repository, trusted)
    for rule in rules:
        if rule.tool == "WebFetch" and rule.specifier and rule.kind in ("allow", "deny"):
            kind = "allowed" if rule.kind == "allow" else "denied"
            source = f"{rule.text} in {rule.source}"
            found.add(kind, [rule.specifier.removeprefix("domain:")], source, rule.repository, trusted)
    return NetworkLists(
        tuple(found.allowed), tuple(found.denied), tuple(found.waiting), found.hosts, tuple(found.warnings)
    )


def _add_claude_file(found: _Collected, path: Path, repository: bool, trusted: bool) -> None:
    if not path.is_file():
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        found.warnings.append(f"{path}: cannot read the sandbox's network settings: {exc}")
        return
    sandbox = data.get("sandbox") if isinstance(data, dict) else None
    network = sandbox.get("network") if isinstance(sandbox, dict) else None
    if not isinstance(network, dict):
        return
    for kind, key in CLAUDE_KEYS.items():
        found.add(kind, network.get(key), f"{path} {key}", repository, trusted)


def _add_layer(found: _Collected, layer: Layer, repository: bool, trusted: bool) -> None:
    table = network_table(layer.table)
    for kind, key in OUR_KEYS.items():
        found.add(kind, table.get(key), f"{layer.origin} {key}", repository, trusted)
    hosts = table.get("hosts")
    if isinstance(hosts, dict) and hosts:
        if repository:
            found.warnings.append(
                f"{layer.origin}: `sandbox.network.hosts` is read from your own settings only; ignored"
            )
        else:
            found.hosts.update({normalize_host(name): str(address) for name, address in hosts.items()})
