"""A language server that misbehaves on purpose: ``hang`` answers initialize and then nothing,
``crash`` exits when a document is opened, ``silent`` never answers at all, ``forks`` is ``hang``
that leaves a ``sleep 300.0123`` running behind it.

Run as ``python -m tests.lsp_servers.misbehaving MODE``; it appends each method it reads to the
file named by LSP_TRACE when set, so a test can see what it was told.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def read(stream) -> dict | None:
    length = None
    while True:
        line = stream.readline()
        if not line:
            return None
        if line in (b"\r\n", b"\n"):
            break
        name, _, value = line.decode().partition(":")
        if name.lower() == "content-length":
            length = int(value)
    return json.loads(stream.read(length)) if length is not None else None


def write(message: dict) -> None:
    body = json.dumps(message).encode()
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    sys.stdout.buffer.flush()


def main() -> None:
    mode = sys.argv[1]
    trace = os.environ.get("LSP_TRACE")
    if mode == "forks":
        subprocess.Popen(["sleep", "300.0123"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    while (message := read(sys.stdin.buffer)) is not None:
        method = message.get("method")
        if trace:
            with open(trace, "a") as handle:
                handle.write(f"{method}\n")
        if mode == "silent":
            continue
        if method == "initialize":
            write({"jsonrpc": "2.0", "id": message["id"], "result": {"capabilities": {"textDocumentSync": 1}}})
        elif method == "textDocument/didOpen" and mode == "crash":
            sys.exit(3)
        elif method == "shutdown":
            write({"jsonrpc": "2.0", "id": message["id"], "result": None})
        elif method == "exit":
            return
    time.sleep(0)


if __name__ == "__main__":
    main()
