"""The carriers of connections: stdio (one client, one JSON message per line) and WebSocket (one
message per text frame) over TCP or a Unix socket, through the ``websockets`` library.

The WebSocket's HTTP handshake is where strangers are turned away, before any message is read:
a request with an ``Origin`` header (a web page) gets 403, a missing or wrong token 401, a Unix
socket peer that is not the user unconfined 403 (peer.py). ``GET /readyz`` and ``/healthz``
answer 200 without a token: they say only that the server is up. With a page of its own (page.py,
issue #48) the listener also serves the page's files, and admits a browser from exactly that page,
which offers the token as a subprotocol. At most ``MAX_OPENING`` connections wait in their
handshake at once (``bounded``): a flood of idle ones may keep new clients out while it lasts, never
take the descriptors the sessions need.
"""

from __future__ import annotations

import asyncio
import contextlib
import http
import logging
import os
import socket
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, BinaryIO, Protocol

from websockets.asyncio.server import Server, ServerConnection, serve, unix_serve
from websockets.exceptions import ConnectionClosed
from websockets.http11 import Request, Response

from agent_cli.app_server import peer
from agent_cli.app_server.auth import TokenCheck
from agent_cli.app_server.connection import Connection, Handler

log = logging.getLogger("agent_cli.app_server")
MAX_MESSAGE = 16 * 1024 * 1024  # bytes of one incoming message (a frame, or a stdio line)
HEALTH_PATHS = ("/readyz", "/healthz")
CLOSE_TOO_SLOW = 1008  # policy violation: the client does not read what it is sent
MAX_OPENING = 64  # connections still in their HTTP handshake; past this, a new one is closed at once
SINGLE_HEADERS = ("Host", "Origin", "Authorization", "Upgrade", "Sec-WebSocket-Protocol")


# --- stdio ------------------------------------------------------------------------------------


class StdioTransport:
    def __init__(self, out: BinaryIO) -> None:
        self.out = out

    async def send(self, text: str) -> None:
        await asyncio.to_thread(self._write, (text + "\n").encode("utf-8"))

    def _write(self, data: bytes) -> None:
        self.out.write(data)
        self.out.flush()

    async def close(self, reason: str) -> None:
        pass  # the process ends with its one client


async def stdin_lines(limit: int = MAX_MESSAGE) -> AsyncIterator[str | bytes]:
    """Lines of stdin; one longer than ``limit`` is skipped whole and answered as a parse error."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(os.dup(0), "rb", 0))
    while True:
        try:
            line = await reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as end:
            if end.partial.strip():
                yield end.partial
            return
        except asyncio.LimitOverrunError as over:
            await reader.readexactly(over.consumed)  # drop what is buffered, then the rest of the line
            while True:
                try:
                    await reader.readuntil(b"\n")
                    break
                except asyncio.LimitOverrunError as more:
                    await reader.readexactly(more.consumed)
            yield b"\x00 message longer than the limit"  # not JSON: answered as a parse error
            continue
        if line.strip():
            yield line


async def serve_stdio(handler: Handler, out: BinaryIO) -> None:
    await Connection(StdioTransport(out), handler, "stdio").run(stdin_lines())


# --- WebSocket --------------------------------------------------------------------------------


class WebSocketTransport:
    def __init__(self, websocket: ServerConnection) -> None:
        self.websocket = websocket

    async def send(self, text: str) -> None:
        await self.websocket.send(text)

    async def close(self, reason: str) -> None:
        code = CLOSE_TOO_SLOW if "does not read" in reason else 1000
        await self.websocket.close(code, reason[:120])


async def frames(websocket: ServerConnection) -> AsyncIterator[str | bytes]:
    with contextlib.suppress(ConnectionClosed):
        async for message in websocket:
            yield message


class Page(Protocol):
    """A web page this listener serves (page.py): its files, and the browsers it admits."""

    def answer(self, connection: ServerConnection, request: Request) -> Response | None: ...

    def admits(self, connection: ServerConnection, request: Request) -> bool: ...

    def authorization(self, request: Request) -> str | None: ...

    def select_subprotocol(self, connection: ServerConnection, offered: Sequence[str]) -> str | None: ...


class Gate:
    """The handshake's checks (see the module's docstring). ``page``: the web page this server
    serves (issue #48), if any: only that page, from exactly its origin, may open a WebSocket."""

    def __init__(self, tokens: TokenCheck | None, unix: bool, page: Page | None = None) -> None:
        self.tokens = tokens
        self.unix = unix
        self.page = page
        self.ready = False

    def __call__(self, connection: ServerConnection, request: Request) -> Response | None:
        if twice := [name for name in SINGLE_HEADERS if len(request.headers.get_all(name)) > 1]:
            return refuse(connection, http.HTTPStatus.BAD_REQUEST, f"the {twice[0]} header is given more than once\n")
        if self.page is not None and (answer := self.page.answer(connection, request)) is not None:
            return answer  # a GET of the page's files (they hold no data), or 404
        origin = request.headers.get("Origin")
        from_page = self.page is not None and self.page.admits(connection, request)
        if origin is not None and not from_page:
            return refuse(connection, http.HTTPStatus.FORBIDDEN, "requests from web pages are refused")
        if self.unix and (why := peer.refusal(connection.transport.get_extra_info("socket"))) is not None:
            log.warning("refused a Unix socket peer: %s", why)
            return refuse(connection, http.HTTPStatus.FORBIDDEN, "only this server's user may connect")
        path = request.path.split("?", 1)[0]
        if path in HEALTH_PATHS:
            ok = self.ready or path == "/healthz"
            return refuse(connection, http.HTTPStatus.OK if ok else http.HTTPStatus.SERVICE_UNAVAILABLE, "ok\n")
        authorization = request.headers.get("Authorization")
        if from_page and self.page is not None:
            authorization = self.page.authorization(request)  # a browser sends it as a subprotocol
        if self.tokens is not None and not self.tokens.accepts(authorization):
            return refuse(connection, http.HTTPStatus.UNAUTHORIZED, "a valid token is required\n")
        return None


def same_origin(origin: str, host: str | None, page_hosts: frozenset[str]) -> bool:
    """A request from a page this server served: its ``Host`` is one of the names the page is
    served under (a rebound DNS name is not: DNS rebinding) and its ``Origin`` that very host."""
    return host is not None and host in page_hosts and origin == f"http://{host}"


def refuse(connection: ServerConnection, status: http.HTTPStatus, text: str) -> Response:
    return connection.respond(status, text)


def bounded(limit: int = MAX_OPENING) -> type[ServerConnection]:
    """Connections that close at once while ``limit`` others are still in their handshake. Each
    costs a file descriptor until it finishes or websockets' 10 s handshake timeout ends it; anyone
    who can reach the port (another local user, the LAN) could otherwise hold a thousand of them,
    and the sessions' model requests and commands would fail for want of descriptors."""
    opening: set[ServerConnection] = set()
    told = [False]

    class Bounded(ServerConnection):
        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            super().connection_made(transport)
            if len(opening) >= limit:
                if not told[0]:
                    log.warning("%d connections are opening at once: new ones are closed until they finish", limit)
                    told[0] = True
                self.transport.abort()  # the asyncio.Transport websockets keeps
                return
            told[0] = told[0] and len(opening) > limit // 2
            opening.add(self)

        async def handshake(self, *args: Any, **kwargs: Any) -> None:
            try:
                await super().handshake(*args, **kwargs)
            finally:
                opening.discard(self)

        def connection_lost(self, exc: Exception | None) -> None:
            opening.discard(self)
            super().connection_lost(exc)

    return Bounded


async def start_websocket(
    handler: Handler,
    *,
    host: str = "",
    port: int = 0,
    path: Path | None = None,
    tokens: TokenCheck | None = None,
    page: Page | None = None,
) -> Server:
    gate = Gate(tokens, unix=path is not None, page=page)

    async def connected(websocket: ServerConnection) -> None:
        where = websocket.remote_address if path is None else "unix"
        await Connection(WebSocketTransport(websocket), handler, str(where)).run(frames(websocket))

    options: dict[str, Any] = {
        "process_request": gate,
        "max_size": MAX_MESSAGE,
        "compression": None,  # JSON frames are small; no deflate state per client
        "server_header": None,
        "create_connection": bounded(),
    }
    if page is not None:
        options["select_subprotocol"] = page.select_subprotocol
    if path is not None:
        server = await unix_serve(connected, str(path), **options)
        os.chmod(path, 0o600)
    else:
        server = await serve(connected, host, port, **options)
    gate.ready = True
    return server


def bound_port(server: Server) -> int:
    sock: socket.socket = next(iter(server.sockets))
    return sock.getsockname()[1]
