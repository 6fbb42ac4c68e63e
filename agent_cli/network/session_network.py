"""A session's network for sandboxed commands: its mode, its lists, and the proxy when it needs one.

Three modes:

- **all**: ``network_access = true`` (or ``danger-full-access``, or no sandbox mechanism at
  all): commands reach everything directly;
- **allow-list**: an allowed domain is in force (lists.py): commands reach the network only
  through the agent's proxy, which allows the listed domains, refuses the denied ones and asks
  about the rest;
- **off**: nothing is listed: commands have no network at all (as before there were lists).

The proxy starts with the first sandboxed command that needs it, and ends with the session.
Allow-list mode needs a network namespace the launcher can make (root, or unprivileged user
namespaces); where it cannot, commands get no network (``off``) and ``unavailable`` says why.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_cli.network.domains import DomainError, normalize_host
from agent_cli.network.gate import NetworkGate, Question, Verdict
from agent_cli.network.lists import NetworkLists
from agent_cli.network.proxy import ProxyServer
from agent_cli.sandbox.network import ProxyRoute, proxy_env
from agent_cli.sandbox.policy import FULL_ACCESS, detect_mechanism, proxy_route_works

ALL, ALLOW_LIST, OFF = "all", "allow-list", "off"


class SessionNetwork:
    def __init__(
        self,
        lists: NetworkLists,
        *,
        sandbox_mode: str,
        network_access: bool,
        run_dir: Path,
        local_only: bool = True,
        question: Question | None = None,
        cannot_ask: str = "",
    ):
        self.lists = lists
        self.gate = NetworkGate(lists, question, cannot_ask)
        self.run_dir = run_dir  # where the proxy's socket goes ($AGENT_HOME/network)
        self.local_only = local_only
        if sandbox_mode == FULL_ACCESS or network_access:
            self.configured = ALL
        else:
            self.configured = ALLOW_LIST if lists.allowed else OFF
        self._server: ProxyServer | None = None
        self._failure = ""

    @property
    def unavailable(self) -> str:
        """Why allow-list mode cannot work here ("" when it can, or is not configured)."""
        if self.configured != ALLOW_LIST:
            return ""
        mechanism = detect_mechanism().name
        if mechanism == "none":
            return "no sandbox mechanism works here, so commands run unconfined with all of the network"
        if not proxy_route_works(mechanism):
            return (
                "the sandbox cannot give commands a network namespace of their own here (not root, and no "
                "unprivileged user namespaces), so they get no network at all"
            )
        return self._failure

    @property
    def mode(self) -> str:
        """What commands get: all, allow-list or off (allow-list where it cannot work is off, or all
        without a sandbox)."""
        if self.configured == ALLOW_LIST and self.unavailable:
            return ALL if detect_mechanism().name == "none" else OFF
        return self.configured

    def route(self) -> ProxyRoute | None:
        """The way to the proxy for a sandboxed command (the proxy starts now if it has not; call
        it on the session's loop); None when commands do not go through one."""
        if self.mode != ALLOW_LIST:
            return None
        if self._server is None:
            self.gate.loop = asyncio.get_running_loop()
            server = ProxyServer(self.gate, self.run_dir, local_only=self.local_only)
            try:
                server.start()
            except OSError as exc:
                self._failure = str(exc)
                return None
            self._server = server
        return self._server.route

    def command_env(self, route: ProxyRoute) -> dict[str, str]:
        """The proxy variables (and the session's token, for the launcher) of a sandboxed command."""
        assert self._server is not None
        return proxy_env(route, self._server.token)

    def fetch_verdict(self, domain: str, port: int) -> Verdict | None:
        """What the lists and this session's answers say of a web_fetch from ``domain``: a denial,
        or an allowance (None: nothing, or everything is allowed anyway)."""
        try:
            host = normalize_host(domain)
        except DomainError as exc:
            return Verdict(False, str(exc))
        verdict = self.gate.verdict(host, port)
        return None if verdict.undecided or (verdict.allowed and self.configured == ALL) else verdict

    @property
    def proxy(self) -> ProxyServer | None:
        return self._server

    def close(self) -> None:
        if self._server is not None:
            self._server.close()
            self._server = None

    # --- reporting --------------------------------------------------------------------------

    def summary(self) -> str:
        """One line: the mode and what it means here."""
        mode = self.mode
        if mode == ALLOW_LIST:
            others = "others are asked about" if self.gate.question is not None else "others are refused"
            return f"allow-list ({len(self.lists.allowed)} allowed, {len(self.lists.denied)} denied; {others})"
        if self.unavailable:
            return f"{mode}: allow-list is configured, but {self.unavailable}"
        return {ALL: "all (network_access = true)", OFF: "off (no domain is allowed)"}[mode]

    def entry_lines(self) -> list[str]:
        """Every entry in force and waiting, with where it is written."""
        lines = [f"allowed {entry.describe()}" for entry in self.lists.allowed]
        lines += [f"denied  {entry.describe()}" for entry in self.lists.denied]
        lines += [
            f"waiting {entry.describe()} [not applied: the folder is not trusted]" for entry in self.lists.waiting
        ]
        lines += [f"hosts   {name} = {address}" for name, address in self.lists.hosts.items()]
        return lines

    def decision_lines(self) -> list[str]:
        """The hosts allowed and refused so far this session, with what decided."""
        allowed, refused = self.gate.hosts()
        lines = [f"allowed {decision.host}:{decision.port} ({decision.by})" for decision in allowed]
        lines += [f"refused {decision.host}:{decision.port} ({decision.by})" for decision in refused]
        return lines
