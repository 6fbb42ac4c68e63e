"""Serve the demo MCP server over streamable HTTP (or only the older SSE transport) on 127.0.0.1,
in a thread of the test process."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import uvicorn

from tests.mcp_servers.demo_server import build_server


@contextmanager
def serve_http(transport: str = "streamable-http") -> Iterator[str]:
    """Yields the server's URL; ``transport`` is "streamable-http" (path /mcp) or "sse" (path /sse)."""
    demo = build_server()
    app = demo.streamable_http_app() if transport == "streamable-http" else demo.sse_app()
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="error", lifespan="on"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}/{'mcp' if transport == 'streamable-http' else 'sse'}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()
