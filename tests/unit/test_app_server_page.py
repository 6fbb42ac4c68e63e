"""The app-server's web page seen from the network (issue #48): its files load without a token and
carry a Content-Security-Policy without inline scripts; a WebSocket handshake from its own origin
with the token offered as a subprotocol opens, one from another site, a rebound DNS name or
without the right token does not; the names the page answers to; and the page's own code builds
DOM nodes only (no markup from strings, no inline script). A real listener on a loopback port."""

from __future__ import annotations

import argparse
import asyncio
import base64
import hashlib
import http.client
import re
import socket
from importlib import resources
from typing import Any

import pytest
from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus
from websockets.typing import Origin, Subprotocol

from agent_cli.app_server import rpc
from agent_cli.app_server.auth import TokenCheck
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.page import SUBPROTOCOL, Names, Page, bearer_of, load_files
from agent_cli.app_server.transports import MAX_OPENING, bound_port, start_websocket
from tests.waiting import until

TOKEN = "page-test-token-0b7e"
CHECK = TokenCheck(hashlib.sha256(TOKEN.encode()).digest())


def offered(token: str) -> str:
    return "bearer." + base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


class Echo:
    """A handler that answers every request with its method (what is served is not tested here)."""

    def opened(self, connection: Connection) -> None:
        connection.initialized = True

    async def request(self, connection: Connection, request: rpc.Request) -> Any:
        return {"method": request.method}

    async def notified(self, connection: Connection, notification: rpc.Notification) -> None:
        pass

    def closed(self, connection: Connection) -> None:
        pass


@pytest.fixture
async def port():
    page = Page(Names.of("127.0.0.1", ["box.tailnet.example", "localhost:9999"]))
    server = await start_websocket(Echo(), host="127.0.0.1", port=0, tokens=CHECK, page=page)
    yield bound_port(server)
    server.close()
    await server.wait_closed()


def get(port: int, path: str, host: str | None = None) -> http.client.HTTPResponse:
    client = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    client.request("GET", path, headers={"Host": host or f"127.0.0.1:{port}"})
    return client.getresponse()


async def handshake(port: int, origin: str | None, protocols: list[str], host: str | None = None) -> int | str:
    """101's subprotocol when the socket opens, else the refusal's HTTP status."""
    try:
        async with connect(
            f"ws://{host or f'127.0.0.1:{port}'}/",
            host="127.0.0.1",  # a rebound name: its address is ours, its Host header the attacker's
            port=port,
            origin=Origin(origin) if origin is not None else None,
            subprotocols=[Subprotocol(protocol) for protocol in protocols],
        ) as socket:
            await socket.send('{"id": 1, "method": "thread/list"}')
            assert "thread/list" in str(await socket.recv())
            return str(socket.subprotocol)
    except InvalidStatus as refused:
        return refused.response.status_code


async def test_the_files_load_without_a_token_with_a_policy_that_forbids_inline_scripts(port):
    answer = await asyncio.to_thread(get, port, "/")
    body = answer.read().decode()
    assert answer.status == 200 and answer.getheader("Content-Type") == "text/html; charset=utf-8"
    policy = answer.getheader("Content-Security-Policy") or ""
    assert "script-src 'self'" in policy and "unsafe-inline" not in policy and "unsafe-eval" not in policy
    assert "frame-ancestors 'none'" in policy and "default-src 'self'" in policy
    assert f"connect-src ws://127.0.0.1:{port}" in policy
    assert answer.getheader("Cache-Control") == "no-store" and answer.getheader("Referrer-Policy") == "no-referrer"
    assert '<script type="module" src="main.js"></script>' in body
    script = await asyncio.to_thread(get, port, "/main.js?v=1")
    assert script.status == 200 and script.getheader("Content-Type") == "text/javascript; charset=utf-8"
    assert (await asyncio.to_thread(get, port, "/secrets")).status == 404
    assert (await asyncio.to_thread(get, port, "/healthz")).status == 200


async def test_the_files_refuse_a_name_the_server_does_not_answer_to(port):
    assert (await asyncio.to_thread(get, port, "/", f"rebound.example:{port}")).status == 421
    assert (await asyncio.to_thread(get, port, "/", f"box.tailnet.example:{port}")).status == 200
    assert (await asyncio.to_thread(get, port, "/", "localhost:9999")).status == 200  # a tunnel's local port


async def test_only_the_pages_own_origin_with_the_token_opens_the_websocket(port):
    own = f"http://127.0.0.1:{port}"
    assert await handshake(port, own, [SUBPROTOCOL, offered(TOKEN)]) == SUBPROTOCOL  # the token is not echoed
    assert await handshake(port, own, [SUBPROTOCOL, offered("wrong")]) == 401
    assert await handshake(port, own, [SUBPROTOCOL]) == 401
    assert await handshake(port, "http://evil.example", [SUBPROTOCOL, offered(TOKEN)]) == 403  # hijacking
    assert await handshake(port, f"http://127.0.0.1:{port + 1}", [SUBPROTOCOL, offered(TOKEN)]) == 403
    rebound = f"rebound.example:{port}"
    assert await handshake(port, f"http://{rebound}", [SUBPROTOCOL, offered(TOKEN)], host=rebound) == 403
    assert await handshake(port, "null", [SUBPROTOCOL, offered(TOKEN)]) == 403


async def test_a_header_given_twice_is_a_bad_request(port):
    """Two Host (or Origin) headers made the check raise: 500 and a traceback in the log."""
    own = f"127.0.0.1:{port}"
    head = (
        f"GET / HTTP/1.1\r\nHost: {own}\r\nHost: rebound.example\r\nOrigin: http://{own}\r\n"
        "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
        f"Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: {SUBPROTOCOL}, {offered(TOKEN)}\r\n\r\n"
    )
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head.encode())
    assert (await reader.readline()).startswith(b"HTTP/1.1 400 ")
    writer.close()


async def test_idle_connections_beyond_a_bound_are_closed_at_once(port):
    """Each connection that never sends its handshake holds a descriptor for websockets' 10 s; a
    thousand of them, from anyone who can reach the port, left the sessions none for their model
    requests and commands (a turn hung). Past MAX_OPENING, a new one is closed at once."""
    idle = [socket.create_connection(("127.0.0.1", port)) for _ in range(MAX_OPENING + 16)]
    try:
        for sock in idle:
            sock.setblocking(False)

        def closed(sock: socket.socket) -> bool:
            try:
                return sock.recv(1) == b""
            except BlockingIOError:
                return False
            except ConnectionError:
                return True

        await until(lambda: sum(map(closed, idle)) >= 16, 30, "the connections past the bound to be closed")
        assert not any(closed(sock) for sock in idle[:MAX_OPENING])  # the first ones wait for their handshake
    finally:
        for sock in idle:
            sock.close()
    assert (await asyncio.to_thread(get, port, "/healthz")).status == 200  # and the server answers again


def test_the_names_a_browser_may_use():
    loopback = Names.of("127.0.0.1", [])
    assert loopback.allow("127.0.0.1:4500", 4500) and loopback.allow("LOCALHOST:4500", 4500)
    assert loopback.allow("[::1]:4500", 4500)
    assert not loopback.allow("127.0.0.1:4501", 4500)
    assert not loopback.allow("rebound.example:4500", 4500)
    assert not loopback.allow("192.168.1.5:4500", 4500)
    assert not loopback.allow(None, 4500) and not loopback.allow("127.0.0.1", 4500)
    everywhere = Names.of("0.0.0.0", ["box.tailnet.example"])
    assert everywhere.allow("192.168.1.5:4500", 4500) and everywhere.allow("[fd7a::1]:4500", 4500)
    assert everywhere.allow("box.tailnet.example:4500", 4500)
    assert not everywhere.allow("attacker.example:4500", 4500)  # a name is allowed only when given
    lan = Names.of("192.168.1.5", [])
    assert lan.allow("192.168.1.5:4500", 4500) and not lan.allow("localhost:4500", 4500)


def test_the_token_offered_as_a_subprotocol():
    assert bearer_of([f"{SUBPROTOCOL}, {offered('tök/en+=')}"]) == "Bearer tök/en+="
    assert bearer_of([SUBPROTOCOL]) is None
    assert bearer_of(["bearer.%%%"]) is None


def test_the_page_builds_dom_nodes_only_and_every_import_is_shipped():
    files = load_files()
    assert {"/", "/index.html", "/main.js", "/style.css"} <= files.keys()
    html = files["/index.html"].decode()
    assert re.findall(r"<script[^>]*>", html) == ['<script type="module" src="main.js">']
    assert not re.search(r"\son\w+=|style=|javascript:", html)
    folder = resources.files("agent_cli.app_server") / "web"
    for name, body in files.items():
        if not name.endswith(".js"):
            continue
        code = body.decode()
        for forbidden in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write", "eval(", "new Function"):
            assert forbidden not in code, f"{name} uses {forbidden}"
        for imported in re.findall(r'from "\./([\w-]+\.js)"', code):
            assert (folder / imported).is_file(), f"{name} imports {imported}, which is not shipped"


def test_no_web_turns_the_page_off():
    assert Page.from_options(argparse.Namespace(no_web=True, web_host=[]), "127.0.0.1") is None
    served = Page.from_options(argparse.Namespace(no_web=False, web_host=["box.example"]), "127.0.0.1")
    assert served is not None and "box.example" in served.names.hosts
