"""LSP's base protocol: Content-Length frames read back whole, a malformed or oversized frame
ends the stream instead of hanging or reading garbage."""

from __future__ import annotations

import asyncio

from agent_cli.lsp.jsonrpc import MAX_MESSAGE_BYTES, frame, read_message


def reader_of(data: bytes) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    reader.feed_eof()
    return reader


async def test_frames_round_trip_with_extra_headers_and_unicode():
    first = frame({"jsonrpc": "2.0", "method": "a", "params": {"text": "é ✓ 𝄞"}})
    second = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n" + frame({"id": 1, "result": None})
    reader = reader_of(first + second)
    assert (await read_message(reader))["params"]["text"] == "é ✓ 𝄞"
    assert await read_message(reader) == {"id": 1, "result": None}
    assert await read_message(reader) is None  # the end of the stream


async def test_malformed_frames_end_the_stream():
    assert await read_message(reader_of(b"Content-Length: nope\r\n\r\n{}")) is None
    assert await read_message(reader_of(b"Content-Length: 10\r\n\r\n{}")) is None  # cut short
    assert await read_message(reader_of(b"Content-Length: 2\r\n\r\n[}")) is None  # not JSON
    too_long = f"Content-Length: {MAX_MESSAGE_BYTES + 1}\r\n\r\n".encode()
    assert await read_message(reader_of(too_long)) is None
    assert await read_message(reader_of(b"X: y\r\n" * 100)) is None  # headers without end
