"""A small web origin on loopback for the sandbox's network tests: a page, and a PEP 503 simple
index with one wheel that ``pip download`` accepts. It records the Host header of every request,
so a test can tell which name reached it."""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

PAGE = b"hello from origin\n"
WHEEL = "tinypkg-1.0-py3-none-any.whl"


def tiny_wheel() -> bytes:
    """A valid pure-Python wheel of ``tinypkg`` 1.0 (metadata, WHEEL, RECORD)."""
    files = {
        "tinypkg/__init__.py": b"VALUE = 1\n",
        "tinypkg-1.0.dist-info/METADATA": b"Metadata-Version: 2.1\nName: tinypkg\nVersion: 1.0\n",
        "tinypkg-1.0.dist-info/WHEEL": b"Wheel-Version: 1.0\nGenerator: tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n",
    }
    record = []
    for name, data in files.items():
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{name},sha256={digest},{len(data)}")
    record.append("tinypkg-1.0.dist-info/RECORD,,")
    files["tinypkg-1.0.dist-info/RECORD"] = ("\n".join(record) + "\n").encode()
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


@dataclass
class Origin:
    port: int
    hosts: list[str] = field(default_factory=list)  # the Host header of each request, in order


@contextmanager
def serve_origin() -> Iterator[Origin]:
    wheel = tiny_wheel()
    sha = hashlib.sha256(wheel).hexdigest()
    pages = {
        "/": ("text/plain", PAGE),
        "/simple/": ("text/html", b'<a href="tinypkg/">tinypkg</a>'),
        "/simple/tinypkg/": ("text/html", f'<a href="/packages/{WHEEL}#sha256={sha}">{WHEEL}</a>'.encode()),
        f"/packages/{WHEEL}": ("application/octet-stream", wheel),
    }
    origin = Origin(0)

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            origin.hosts.append(self.headers.get("Host", ""))
            if self.path.startswith("/redirect?to="):  # a redirect to wherever the test says
                self.send_response(302)
                self.send_header("Location", self.path.removeprefix("/redirect?to="))
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            kind, body = pages.get(self.path, ("text/plain", b""))
            self.send_response(200 if self.path in pages else 404)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002 - the base class's name
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    origin.port = server.server_address[1]
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield origin
    finally:
        server.shutdown()
        server.server_close()


def knock(proxy_socket: str, token: str, port: int) -> bytes:
    """Hand the proxy a connection of our own as a bridge does (the token, the socket, our stderr),
    ask it for ``CONNECT pypi.test:PORT``; what comes back (nothing: it was refused unread)."""
    import socket

    listener = socket.create_server(("127.0.0.1", 0))
    ours = socket.create_connection(listener.getsockname())
    theirs, _ = listener.accept()
    listener.close()
    with socket.socket(socket.AF_UNIX) as proxy:
        proxy.connect(proxy_socket)
        try:
            socket.send_fds(proxy, [token.encode() + b"\n"], [theirs.fileno(), 2])
        except (BrokenPipeError, ConnectionResetError):
            pass  # closed on us before we said a word
    theirs.close()
    ours.settimeout(10)
    answer = b""
    try:
        ours.sendall(b"CONNECT pypi.test:%d HTTP/1.1\r\n\r\n" % port)
        while b"\r\n\r\n" not in answer and (data := ours.recv(100)):
            answer += data
    except (ConnectionResetError, BrokenPipeError):
        pass
    ours.close()
    return answer
