"""The web page `agent app-server` serves on its WebSocket port (issue #48): its static files, and
which browsers may open the WebSocket.

The files (``web/``, shipped in the package) hold no data: they load without a token and every
session, message and approval then comes over the protocol, like any other client's. A browser
cannot set an ``Authorization`` header on a WebSocket, so the page offers the token as a
subprotocol, ``bearer.BASE64URL(TOKEN)`` beside :data:`SUBPROTOCOL`, and the server selects only
:data:`SUBPROTOCOL` (the token never comes back in an answer, and no URL carries it to a log).

Who may use it (DNS rebinding and cross-site WebSocket hijacking): the request's ``Host`` must be
a name this server answers as (the listening address, ``localhost`` on loopback, an IP address when
it listens on all of them, the ``--web-host`` names) and a handshake's ``Origin`` exactly that
host. A page from another site, or a rebound DNS name, gets 403 (the files: 421). Every file goes
out with a Content-Security-Policy that forbids inline scripts and framing.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import http
import ipaddress
import re
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import resources
from typing import Any

from websockets.asyncio.server import ServerConnection
from websockets.datastructures import Headers
from websockets.http11 import Request, Response

from agent_cli.app_server.transports import HEALTH_PATHS, same_origin

SUBPROTOCOL = "agent-app-server"
BEARER_PREFIX = "bearer."
BASE64URL = re.compile(r"[A-Za-z0-9_-]+")
LOOPBACK_NAMES = ("localhost", "127.0.0.1", "[::1]")
TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".svg": "image/svg+xml",
}
ENTRY = "index.html"


def load_files() -> dict[str, bytes]:
    """The page's files, by URL path (read once: they never change while the server runs)."""
    folder = resources.files("agent_cli.app_server") / "web"
    files = {f"/{entry.name}": entry.read_bytes() for entry in folder.iterdir() if suffix(entry.name) in TYPES}
    files["/"] = files[f"/{ENTRY}"]
    return files


def suffix(name: str) -> str:
    return name[name.rfind(".") :] if "." in name else ""


@dataclass(frozen=True, slots=True)
class Names:
    """The names a browser may address this server by."""

    hosts: frozenset[str]  # bare host names (lowercase; IPv6 in brackets), at the listening port
    pairs: frozenset[str]  # HOST:PORT given whole (a tunnel's local port)
    any_address: bool  # listening on 0.0.0.0 or :: : any IP address of the machine

    @classmethod
    def of(cls, listen_host: str, extra: Sequence[str]) -> Names:
        address = ipaddress.ip_address(listen_host)
        hosts = {bracketed(listen_host)}
        if address.is_loopback or address.is_unspecified:
            hosts.update(LOOPBACK_NAMES)
        pairs = set()
        for name in (n.strip().lower() for n in extra if n.strip()):
            if name.rsplit(":", 1)[-1].isdigit() and not name.endswith("]"):
                pairs.add(name)
            else:
                hosts.add(name)
        return cls(frozenset(hosts), frozenset(pairs), address.is_unspecified)

    def allow(self, host: str | None, port: int) -> bool:
        """Whether a request's ``Host`` names this server (never a name someone else's DNS chose)."""
        if not host:
            return False
        host = host.lower()
        if host in self.pairs:
            return True
        name, _, given = host.rpartition(":")
        if not name or given != str(port):
            return False
        return name in self.hosts or (self.any_address and is_ip(name))

    def allowed_hosts(self, host: str | None, port: int) -> frozenset[str]:
        return frozenset({host.lower()}) if host and self.allow(host, port) else frozenset()


def bracketed(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name.removeprefix("[").removesuffix("]"))
    except ValueError:
        return False
    return True


class Page:
    """The hook the WebSocket listener calls (transports.Gate): the files, the browsers admitted."""

    def __init__(self, names: Names, files: dict[str, bytes] | None = None) -> None:
        self.names = names
        self.files = load_files() if files is None else files

    @classmethod
    def from_options(cls, args: argparse.Namespace, listen_host: str) -> Page | None:
        if getattr(args, "no_web", False):
            return None
        return cls(Names.of(listen_host, getattr(args, "web_host", []) or []))

    def answer(self, connection: ServerConnection, request: Request) -> Response | None:
        """A plain GET of one of the page's files (or 404 for any other path); None for a
        WebSocket handshake and the health checks, which the gate goes on to check."""
        if request.headers.get("Upgrade", "").lower() == "websocket":
            return None
        path = request.path.split("?", 1)[0]
        if path in HEALTH_PATHS:
            return None
        body = self.files.get(path)
        if body is None:
            return plain(http.HTTPStatus.NOT_FOUND, "not found\n")
        host = request.headers.get("Host")
        if not self.names.allow(host, local_port(connection)):
            return plain(
                http.HTTPStatus.MISDIRECTED_REQUEST,
                "this server does not answer to that name: open it by its address, or start it with --web-host NAME\n",
            )
        origin = request.headers.get("Origin")
        if origin is not None and not self.admits(connection, request):
            return plain(http.HTTPStatus.FORBIDDEN, "requests from other sites are refused\n")
        return file_response(path, body, str(host))

    def admits(self, connection: ServerConnection, request: Request) -> bool:
        """A handshake from this server's own page: its ``Origin`` is exactly its allowed ``Host``."""
        origin = request.headers.get("Origin")
        host = request.headers.get("Host")
        return origin is not None and same_origin(
            origin.lower(), host.lower() if host else None, self.names.allowed_hosts(host, local_port(connection))
        )

    def authorization(self, request: Request) -> str | None:
        """The token a browser offered as a subprotocol, as an ``Authorization`` value."""
        return bearer_of(request.headers.get_all("Sec-WebSocket-Protocol"))

    @staticmethod
    def select_subprotocol(connection: Any, offered: Sequence[str]) -> str | None:
        return SUBPROTOCOL if SUBPROTOCOL in offered else None


def bearer_of(header_values: Sequence[str]) -> str | None:
    for value in header_values:
        for offered in (part.strip() for part in value.split(",")):
            if offered.startswith(BEARER_PREFIX):
                encoded = offered[len(BEARER_PREFIX) :]
                if not BASE64URL.fullmatch(encoded):
                    return None
                try:
                    token = base64.urlsafe_b64decode(encoded + "=" * (-len(encoded) % 4)).decode("utf-8")
                except (binascii.Error, ValueError):
                    return None
                return f"Bearer {token}"
    return None


def local_port(connection: ServerConnection) -> int:
    sockname = connection.transport.get_extra_info("sockname")
    return int(sockname[1]) if isinstance(sockname, tuple) and len(sockname) > 1 else 0


def content_security_policy(host: str) -> str:
    return "; ".join(
        (
            "default-src 'self'",
            "script-src 'self'",
            "style-src 'self'",
            "img-src 'self'",
            f"connect-src ws://{host}",
            "frame-ancestors 'none'",
            "base-uri 'none'",
            "form-action 'none'",
            "object-src 'none'",
        )
    )


SECURITY_HEADERS = (
    ("X-Content-Type-Options", "nosniff"),
    ("X-Frame-Options", "DENY"),
    ("Referrer-Policy", "no-referrer"),  # a `?token=` address never travels on
    ("Cache-Control", "no-store"),  # nor stays in a cache
    ("Cross-Origin-Opener-Policy", "same-origin"),
    ("Cross-Origin-Resource-Policy", "same-origin"),
)


def file_response(path: str, body: bytes, host: str) -> Response:
    name = ENTRY if path == "/" else path.lstrip("/")
    headers = Headers(
        [
            ("Content-Type", TYPES[suffix(name)]),
            ("Content-Length", str(len(body))),
            ("Content-Security-Policy", content_security_policy(host)),
            *SECURITY_HEADERS,
        ]
    )
    return Response(http.HTTPStatus.OK, "OK", headers, body)


def plain(status: http.HTTPStatus, text: str) -> Response:
    body = text.encode()
    headers = Headers(
        [("Content-Type", "text/plain; charset=utf-8"), ("Content-Length", str(len(body))), *SECURITY_HEADERS]
    )
    return Response(status.value, status.phrase, headers, body)
