"""Lines a JSON-RPC client should never send, answered here with the protocol's errors.

The ACP library's receive loop assumes each line is a JSON object: a line holding an array or a
number ended the whole connection, and a line that is not JSON got no answer. Only JSON objects
pass on to the library; anything else gets ``Parse error`` or ``Invalid Request`` (id null).
"""

from __future__ import annotations

import asyncio
import json

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


async def filter_lines(source: asyncio.StreamReader, sink: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    """Copy JSON-object lines from ``source`` to ``sink`` until end of input, then end ``sink``."""
    try:
        while line := await read_line(source):
            if problem := refusal(line):
                writer.write(problem)  # one whole line: never interleaves with the library's writes
                await writer.drain()
            else:
                sink.feed_data(line if line.endswith(b"\n") else line + b"\n")
    finally:
        sink.feed_eof()


async def read_line(source: asyncio.StreamReader) -> bytes:
    """One line of any length (a prompt with images may exceed the stream's limit); b"" at the end."""
    chunks: list[bytes] = []
    while True:
        try:
            chunks.append(await source.readuntil(b"\n"))
            return b"".join(chunks)
        except asyncio.LimitOverrunError as exc:
            chunks.append(await source.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)


def refusal(line: bytes) -> bytes | None:
    """The error response for a line the library must not see, or None (blank lines are skipped)."""
    text = line.strip()
    if not text:
        return None
    try:
        message = json.loads(text)
    except ValueError:
        return error_line(PARSE_ERROR, "Parse error", "the line is not JSON")
    if not isinstance(message, dict):
        return error_line(
            INVALID_REQUEST, "Invalid Request", "a message must be a JSON object (batches are not supported)"
        )
    return None


def error_line(code: int, message: str, details: str) -> bytes:
    error = {"code": code, "message": message, "data": {"details": details}}
    return json.dumps({"jsonrpc": "2.0", "id": None, "error": error}).encode() + b"\n"
