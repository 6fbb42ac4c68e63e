"""All of a session's MCP servers: started together in the background, closed together at the end.

The session asks :meth:`McpManager.wait_started` before its first model request (each server
gets at most its ``startup_timeout_sec``), and front ends subscribe with :meth:`add_listener`
to show servers starting and getting ready. Nothing here imports the SDK until a server starts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.mcp.config import ServerSpec
from agent_cli.mcp.connection import McpCallError, ServerConnection
from agent_cli.mcp.oauth import login, token_file, uses_oauth


@dataclass(frozen=True, slots=True)
class ServerState:
    """A server as ``/mcp`` and the TUI show it."""

    name: str
    transport: str
    target: str  # command line or URL
    scope: str
    status: str  # starting | ready | failed | stopped | disabled
    error: str | None
    tools: int
    prompts: int
    resources: int
    auth: str | None = None  # OAuth servers: needs login | logged in | expired


class McpManager:
    def __init__(self, specs: Iterable[ServerSpec], log_dir: Path, base_env: Mapping[str, str] | None = None):
        self.log_dir = log_dir
        self.base_env = base_env
        self.connections: dict[str, ServerConnection] = {}
        self.disabled: list[ServerSpec] = []
        self.started = False
        self.can_ask = False  # a front end that shows elicitation forms sets it (the TUI)
        self._listeners: list[Callable[[], None]] = []
        self._reported: set[tuple[str, str]] = set()
        self.add(specs)

    def add(self, specs: Iterable[ServerSpec]) -> None:
        """More servers (a plugin's); started at once when the others already were. A name that
        is taken keeps its first definition."""
        for spec in specs:
            if spec.name in self.connections or any(d.name == spec.name for d in self.disabled):
                continue
            if not spec.enabled:
                self.disabled.append(spec)
                continue
            connection = ServerConnection(spec, self.log_dir, self.base_env, self._changed)
            connection.can_ask = self.can_ask
            self.connections[spec.name] = connection
            if self.started:
                connection.start()

    def start(self) -> None:
        """Start every server concurrently (needs a running event loop); idempotent."""
        if self.started:
            return
        self.started = True
        for connection in self.connections.values():
            connection.start()
        self._changed()

    async def wait_started(self) -> None:
        """Until every server is ready or failed; one still starting after its timeout failed."""
        self.start()
        waiting = [c for c in self.connections.values() if c.status == "starting"]
        await asyncio.gather(*(c.wait_ready() for c in waiting))

    @property
    def starting(self) -> bool:
        return any(c.status == "starting" for c in self.connections.values())

    async def aclose(self) -> None:
        await asyncio.gather(*(c.stop() for c in self.connections.values()), return_exceptions=True)

    # --- what front ends see ------------------------------------------------------------

    def allow_questions(self) -> None:
        """The front end shows the servers' elicitation forms (otherwise they are declined)."""
        self.can_ask = True
        for connection in self.connections.values():
            connection.can_ask = True

    def add_listener(self, listener: Callable[[], None]) -> None:
        """Called whenever a server's status or lists change."""
        self._listeners.append(listener)

    def _changed(self) -> None:
        for listener in list(self._listeners):
            listener()

    def states(self) -> list[ServerState]:
        states = [
            ServerState(
                c.spec.name,
                c.spec.transport,
                c.spec.target,
                c.spec.scope,
                c.status,
                c.error,
                len(c.tools),
                len(c.prompts),
                len(c.resources),
                login_state(c),
            )
            for c in self.connections.values()
        ]
        states += [
            ServerState(s.name, s.transport, s.target, s.scope, "disabled", None, 0, 0, 0) for s in self.disabled
        ]
        return states

    def take_failures(self) -> list[str]:
        """One warning per server failure not reported yet, with the last lines of its stderr."""
        warnings = []
        for connection in self.connections.values():
            key = (connection.spec.name, connection.error or "")
            if connection.status != "failed" or key in self._reported:
                continue
            self._reported.add(key)
            if connection.needs_login:
                warnings.append(f"MCP server '{connection.spec.name}' {connection.error}; its tools are left out")
                continue
            lines = [f"MCP server '{connection.spec.name}' failed to start: {connection.error}"]
            lines += [f"  stderr: {line}" for line in connection.stderr_tail()]
            if connection.stderr_tail():
                lines.append(f"  (full log: {connection.log_path})")
            warnings.append("\n".join(lines))
        return warnings

    def ready(self) -> list[ServerConnection]:
        return [c for c in self.connections.values() if c.status == "ready"]

    def with_tools(self) -> list[ServerConnection]:
        """Servers whose tools are offered: ready ones, and one that crashed (it restarts on the next
        call); not one that needs a login."""
        return [
            c for c in self.connections.values() if c.tools and c.status in ("ready", "failed") and not c.needs_login
        ]

    async def refresh(self) -> bool:
        """Re-list whatever ``list_changed`` notifications announced; True if any tool list changed."""
        results = await asyncio.gather(*(c.refresh() for c in self.ready()))
        return any(results)

    # --- OAuth logins ------------------------------------------------------------------

    async def login(self, name: str, show: Callable[[str], None]) -> None:
        """Sign in to an OAuth server (browser and loopback, see :mod:`agent_cli.mcp.oauth`), then reconnect it."""
        connection = self.connection(name)
        await login(connection.spec, show)
        await self._reconnect(connection)

    async def logout(self, name: str) -> bool:
        """Forget the server's tokens and registration; False when there was no login."""
        connection = self.connection(name)
        removed = token_file(connection.spec).remove()
        await self._reconnect(connection)
        return removed

    async def _reconnect(self, connection: ServerConnection) -> None:
        await connection.stop()
        connection.start()
        await connection.wait_ready()
        self._changed()

    # --- calls --------------------------------------------------------------------------

    def connection(self, server: str) -> ServerConnection:
        connection = self.connections.get(server)
        if connection is None:
            known = ", ".join(self.connections) or "none"
            raise McpCallError(f"no MCP server named {server!r} (servers: {known})")
        return connection

    async def call_tool(
        self, server: str, tool: str, arguments: dict[str, Any], emit: Callable[[Any], None] | None = None
    ) -> Any:
        """``emit``: where the server's questions during the call are asked (see :mod:`agent_cli.mcp.elicitation`)."""
        return await self.connection(server).request(
            f"{server}.{tool}", lambda client: client.call_tool(tool, arguments), emit=emit
        )

    async def get_prompt(self, server: str, prompt: str, arguments: dict[str, str]) -> Any:
        connection = self.connection(server)
        return await connection.request(
            f"prompt {server}/{prompt}",
            lambda client: client.get_prompt(prompt, arguments),
            connection.spec.startup_timeout_sec + connection.spec.tool_timeout_sec,
        )

    async def read_resource(self, server: str, uri: str) -> Any:
        return await self.connection(server).request(
            f"resource {server}:{uri}", lambda client: client.read_resource(uri)
        )


def login_state(connection: ServerConnection) -> str | None:
    """What ``/mcp`` shows about an OAuth server's login (None for other servers)."""
    if not uses_oauth(connection.spec):
        return None
    if connection.needs_login:
        return "expired" if token_file(connection.spec).read().get("client") else "needs login"
    state = token_file(connection.spec).state()
    return None if state == "needs login" else state  # no login stored: the server may need none
