"""What a client says to the proxy, read: HTTP (``CONNECT host:port`` for TLS, or a plain request
with an absolute ``http://`` URL) and SOCKS5 (``CONNECT`` by name or address); and where the
answers go: to the client, and a refusal's reason to the command's stderr.

No TLS is intercepted: after ``CONNECT`` the proxy only copies bytes. A plain HTTP request is
passed on in origin form with ``Connection: close`` (one request per connection, so a second
request cannot ride to another host on a connection checked for the first) and the ``Host`` of its
URL, the name that was checked, in place of whatever ``Host`` the client sent.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from dataclasses import dataclass
from urllib.parse import urlsplit

MAX_HEAD = 64 * 1024
HOP_HEADERS = (b"proxy-connection", b"proxy-authorization", b"connection", b"keep-alive")
SOCKS_VERSION = 5
SOCKS_NO_AUTH, SOCKS_NO_METHOD = 0, 0xFF
SOCKS_CONNECT = 1
# SOCKS5 replies
SOCKS_OK, SOCKS_FAILURE, SOCKS_NOT_ALLOWED, SOCKS_UNREACHABLE = 0, 1, 2, 4
SOCKS_BAD_COMMAND, SOCKS_BAD_ADDRESS = 7, 8


class BadRequest(Exception):
    """Not a request the proxy understands; the message says why."""


@dataclass(frozen=True, slots=True)
class Request:
    host: str  # as the client named it (not yet normalized)
    port: int
    protocol: str  # "connect" | "http" | "socks"
    head: bytes = b""  # a plain HTTP request's head, rewritten for the server


class ClientWriter:
    """What goes back: to the client (handed over by the bridge, sandbox/bridge.py), and to the
    command's stderr for the line that says why a request was refused."""

    def __init__(self, writer: asyncio.StreamWriter, notices: int | None = None):
        self.writer = writer
        self.notices = notices  # the command's stderr, or None

    def data(self, payload: bytes) -> None:
        self.writer.write(payload)

    def notice(self, line: str) -> None:
        if self.notices is not None:
            with contextlib.suppress(OSError):  # the command closed its stderr
                os.write(self.notices, line.encode("utf-8", "replace"))

    async def drain(self) -> None:
        await self.writer.drain()


# --- HTTP --------------------------------------------------------------------------------------


async def read_http(first: bytes, reader: asyncio.StreamReader) -> Request:
    try:
        head = first + await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError:
        raise BadRequest("the request's head is too long") from None
    if len(head) > MAX_HEAD:
        raise BadRequest("the request's head is too long")
    line, _, headers = head.partition(b"\r\n")
    parts = line.decode("latin-1").split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/"):
        raise BadRequest("not an HTTP request")
    method, target, version = parts
    if method == "CONNECT":
        host, port = split_host_port(target)
        return Request(host, port, "connect")
    if not target.lower().startswith("http://"):
        raise BadRequest("a proxy request names an absolute http:// URL (use CONNECT for https)")
    try:
        url = urlsplit(target)
        host, port = url.hostname or "", url.port or 80
    except ValueError:
        raise BadRequest(f"not a valid URL: {target}") from None
    if not host:
        raise BadRequest(f"the URL has no host: {target}")
    path = (url.path or "/") + (f"?{url.query}" if url.query else "")
    kept = [
        header
        for header in headers.split(b"\r\n")
        if header and header.split(b":", 1)[0].strip().lower() not in (*HOP_HEADERS, b"host")
    ]
    # The host checked is the one the server hears (RFC 9112 3.2.2): a Host of another site would
    # reach it through an allowed address (a CDN's, a shared host's), past the lists.
    authority = f"Host: {url.netloc.rpartition('@')[2]}".encode("latin-1")
    head = f"{method} {path} {version}".encode("latin-1")
    rewritten = b"\r\n".join([head, authority, *kept, b"Connection: close", b"", b""])
    return Request(host, port, "http", rewritten)


def split_host_port(target: str) -> tuple[str, int]:
    if target.startswith("["):
        host, _, rest = target[1:].partition("]")
        port = rest.removeprefix(":")
    else:
        host, _, port = target.rpartition(":")
    if not host or not port.isdigit() or not 0 < int(port) < 65536:
        raise BadRequest(f"CONNECT needs host:port, got {target!r}")
    return host, int(port)


def http_reply(status: str, body: str = "") -> bytes:
    payload = (body + "\n").encode("utf-8", "replace") if body else b""
    head = f"HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {len(payload)}\r\n"
    return (head + "Connection: close\r\n\r\n").encode("latin-1") + payload


CONNECTED = b"HTTP/1.1 200 Connection established\r\n\r\n"


# --- SOCKS5 ------------------------------------------------------------------------------------


async def read_socks(reader: asyncio.StreamReader, client: ClientWriter) -> Request:
    """The greeting (the first byte, the version, was read), the method choice, the request."""
    methods = await reader.readexactly((await reader.readexactly(1))[0])
    if SOCKS_NO_AUTH not in methods:
        client.data(bytes([SOCKS_VERSION, SOCKS_NO_METHOD]))
        raise BadRequest("SOCKS5 without authentication is all the proxy speaks")
    client.data(bytes([SOCKS_VERSION, SOCKS_NO_AUTH]))
    await client.drain()
    version, command, _, kind = await reader.readexactly(4)
    if kind == 1:
        host = ".".join(str(b) for b in await reader.readexactly(4))
    elif kind == 3:
        host = (await reader.readexactly((await reader.readexactly(1))[0])).decode("utf-8", "replace")
    elif kind == 4:
        raw = await reader.readexactly(16)
        host = ":".join(raw[i : i + 2].hex() for i in range(0, 16, 2))
    else:
        client.data(socks_reply(SOCKS_BAD_ADDRESS))
        raise BadRequest(f"SOCKS5 address type {kind} is unknown")
    port = int.from_bytes(await reader.readexactly(2), "big")
    if version != SOCKS_VERSION or command != SOCKS_CONNECT:
        client.data(socks_reply(SOCKS_BAD_COMMAND))
        raise BadRequest("only SOCKS5 CONNECT is supported (no BIND, no UDP)")
    return Request(host, port, "socks")


def socks_reply(code: int) -> bytes:
    return bytes([SOCKS_VERSION, code, 0, 1, 0, 0, 0, 0, 0, 0])
