"""JSON-RPC 2.0 over a language server's stdio, framed by ``Content-Length`` headers (LSP's base protocol).

One reader task per connection dispatches what the server sends: responses to our requests,
notifications (``textDocument/publishDiagnostics``) and the server's own requests
(``workspace/configuration``), answered by a handler. A server that closes its stdout fails every
pending request at once, so nothing waits on a dead server.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

MAX_MESSAGE_BYTES = 64 * 1024 * 1024  # a server announcing more is broken: the connection ends
MAX_HEADER_LINES = 32

Notify = Callable[[str, Any], None]
Answer = Callable[[str, Any], Awaitable[Any]]


class RpcError(Exception):
    """The server answered a request with an error, or the connection is gone."""


class ConnectionLost(RpcError):
    pass


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any] | None:
    """The next message, or None at the end of the stream (or on a malformed frame)."""
    length = None
    for _ in range(MAX_HEADER_LINES):
        line = await reader.readline()
        if not line:
            return None
        line = line.strip()
        if not line:
            break
        name, _, value = line.decode("ascii", "replace").partition(":")
        if name.strip().lower() == "content-length":
            try:
                length = int(value.strip())
            except ValueError:
                return None
    else:
        return None
    if length is None or not 0 <= length <= MAX_MESSAGE_BYTES:
        return None
    try:
        body = await reader.readexactly(length)
        message = json.loads(body)
    except (asyncio.IncompleteReadError, ValueError):
        return None
    return message if isinstance(message, dict) else {}


class Connection:
    """Requests and notifications over ``reader``/``writer``; ``on_notify`` sees the server's
    notifications, ``on_request`` answers its requests (raise LookupError: method not found)."""

    def __init__(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, on_notify: Notify, on_request: Answer
    ):
        self.reader, self.writer = reader, writer
        self.on_notify, self.on_request = on_notify, on_request
        self._next_id = 0
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self.closed = asyncio.Event()
        self._answering: set[asyncio.Task[None]] = set()  # the server's requests being answered
        self._task = asyncio.create_task(self._read_loop(), name="lsp-reader")

    async def request(self, method: str, params: Any, timeout: float) -> Any:
        if self.closed.is_set():
            raise ConnectionLost("the language server's connection is closed")
        self._next_id += 1
        request_id = self._next_id
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self._send({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params})
            async with asyncio.timeout(timeout):
                return await future
        except TimeoutError:
            self.notify_nowait("$/cancelRequest", {"id": request_id})
            raise
        finally:
            self._pending.pop(request_id, None)

    async def notify(self, method: str, params: Any) -> None:
        await self._send({"jsonrpc": "2.0", "method": method, "params": params})

    def notify_nowait(self, method: str, params: Any) -> None:
        if not self.closed.is_set():
            with contextlib.suppress(Exception):
                self.writer.write(frame({"jsonrpc": "2.0", "method": method, "params": params}))

    async def _send(self, message: dict[str, Any]) -> None:
        if self.closed.is_set():
            raise ConnectionLost("the language server's connection is closed")
        try:
            self.writer.write(frame(message))
            await self.writer.drain()
        except (ConnectionError, RuntimeError, OSError) as exc:
            self._close()
            raise ConnectionLost(f"the language server's stdin is closed ({exc})") from None

    async def _read_loop(self) -> None:
        try:
            while (message := await read_message(self.reader)) is not None:
                await self._dispatch(message)
        except (ConnectionError, OSError):
            pass
        finally:
            self._close()

    async def _dispatch(self, message: dict[str, Any]) -> None:
        method = message.get("method")
        if isinstance(method, str) and "id" in message:  # the server asks us something
            task = asyncio.create_task(self._answer(message["id"], method, message.get("params")))
            self._answering.add(task)
            task.add_done_callback(self._answering.discard)
        elif isinstance(method, str):
            with contextlib.suppress(Exception):  # a handler's bug must not end the connection
                self.on_notify(method, message.get("params"))
        elif (future := self._pending.get(message.get("id"))) is not None and not future.done():  # type: ignore[arg-type]
            if "error" in message:
                error = message["error"] if isinstance(message["error"], dict) else {}
                future.set_exception(RpcError(str(error.get("message") or error)))
            else:
                future.set_result(message.get("result"))

    async def _answer(self, request_id: Any, method: str, params: Any) -> None:
        try:
            reply: dict[str, Any] = {"result": await self.on_request(method, params)}
        except LookupError:
            reply = {"error": {"code": -32601, "message": f"method not supported: {method}"}}
        except Exception as exc:  # noqa: BLE001 - the server reads the failure; we go on
            reply = {"error": {"code": -32603, "message": str(exc)}}
        with contextlib.suppress(RpcError):
            await self._send({"jsonrpc": "2.0", "id": request_id, **reply})

    def _close(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ConnectionLost("the language server exited"))

    async def aclose(self) -> None:
        self._close()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._task
