"""One client connection, whatever carries it (stdio, a Unix socket, a WebSocket).

What it sends goes through a bounded queue that one writer task drains: a client that stops
reading fills its own queue and is dropped, and nothing the server does (a turn streaming to five
clients) ever waits on it. What it receives is decoded here: a request runs as a task of its own,
with a bound on how many run at once (beyond it: -32001 "Server overloaded; retry later."); an
answer to one of our requests (an approval) resolves its future.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import logging
import os
from collections.abc import AsyncIterator, Awaitable
from pathlib import Path
from typing import Any, Protocol

from agent_cli.app_server import rpc
from agent_cli.paths import open_private

log = logging.getLogger("agent_cli.app_server")

QUEUE_MESSAGES = 8192  # messages waiting for a slow client before it is dropped
QUEUE_BYTES = 32 * 1024 * 1024  # ... or this many bytes of them
QUEUE_BYTES_ENV = "AGENT_APP_SERVER_QUEUE_BYTES"  # another byte bound (tests: a small one)
MAX_IN_FLIGHT = 64  # requests of one client handled at once
FLUSH_SECONDS = 2.0  # what is queued for a leaving client may take this long to go out
_ids = itertools.count(1)
TRACE_ENV = "AGENT_APP_SERVER_TRACE"  # a file that gets every message sent, one JSON line each (debugging, tests)


class Transport(Protocol):
    """What carries a connection's messages: one text each way per message."""

    async def send(self, text: str) -> None: ...

    async def close(self, reason: str) -> None: ...


class Handler(Protocol):
    """What the server does with a connection's messages (dispatch.py)."""

    def opened(self, connection: Connection) -> None: ...

    async def request(self, connection: Connection, request: rpc.Request) -> Any: ...

    async def notified(self, connection: Connection, notification: rpc.Notification) -> None: ...

    def closed(self, connection: Connection) -> None: ...


class ConnectionClosed(Exception):
    """The client left before it answered a request of ours."""


class Connection:
    def __init__(self, transport: Transport, handler: Handler, peer: str = "") -> None:
        self.id = next(_ids)
        self.peer = peer
        self.transport = transport
        self.handler = handler
        self.initialized = False  # `initialize` answered: other methods are allowed
        self.client_name = ""
        self.opted_out: frozenset[str] = frozenset()  # notifications this client asked not to get
        self._outgoing: asyncio.Queue[str | None] = asyncio.Queue()
        self._queued_bytes = 0
        self._pending: dict[rpc.RequestId, asyncio.Future[Any]] = {}  # our requests, by id
        self._next_request = itertools.count()
        self._in_flight: set[asyncio.Task[None]] = set()
        self.closed = asyncio.Event()
        self._close_reason = ""
        self.queue_bytes = int(os.environ.get(QUEUE_BYTES_ENV) or QUEUE_BYTES)
        self.max_in_flight = MAX_IN_FLIGHT

    def __repr__(self) -> str:
        return f"<connection {self.id} {self.client_name or self.peer}>"

    # --- sending --------------------------------------------------------------------------

    def send(self, message: dict[str, Any], answering: str | None = None) -> bool:
        """Queue ``message`` without waiting; a client whose queue is full is dropped (False).
        ``answering``: the method of the request ``message`` answers (for the trace)."""
        if self.closed.is_set():
            return False
        text = rpc.encode(message)
        over = self._queued_bytes and self._queued_bytes + len(text) > self.queue_bytes  # one big message fits
        if self._outgoing.qsize() >= QUEUE_MESSAGES or over:
            self.drop("the client does not read its messages (its queue is full)")
            return False
        self._queued_bytes += len(text)
        self._outgoing.put_nowait(text)
        trace(self.id, text, answering)
        return True

    def notify(self, method: str, params: dict[str, Any]) -> bool:
        if method in self.opted_out:
            return True
        return self.send(rpc.notification(method, params))

    def ask(self, method: str, params: dict[str, Any]) -> tuple[rpc.RequestId, asyncio.Future[Any]]:
        """Send a request of ours (an approval); the future gets the client's result, or
        :class:`ConnectionClosed` when it leaves first, or an :class:`rpc.RpcError` it answered."""
        request_id = next(self._next_request)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        future.add_done_callback(lambda _: self._pending.pop(request_id, None))
        if not self.send(rpc.request(request_id, method, params)) and not future.done():
            future.set_exception(ConnectionClosed(self._close_reason))
        return request_id, future

    def drop(self, reason: str) -> None:
        """End the connection from our side (the writer closes the transport)."""
        if self.closed.is_set():
            return
        log.warning("%r dropped: %s", self, reason)
        self._close_reason = reason
        self._finish()
        self._outgoing.put_nowait(None)

    # --- running --------------------------------------------------------------------------

    async def run(self, incoming: AsyncIterator[str | bytes]) -> None:
        """Serve until the client leaves (``incoming`` ends) or is dropped."""
        self.handler.opened(self)
        writer = asyncio.create_task(self._write())
        try:
            reading = asyncio.ensure_future(self._read(incoming))
            closed = asyncio.ensure_future(self.closed.wait())
            await asyncio.wait([reading, closed], return_when=asyncio.FIRST_COMPLETED)
            reading.cancel()
            closed.cancel()
            await asyncio.gather(reading, closed, return_exceptions=True)
        finally:
            self._finish()
            self._outgoing.put_nowait(None)
            for task in list(self._in_flight):
                task.cancel()
            # What is queued goes out, unless the client stopped reading: then it is not waited for.
            await asyncio.wait([writer], timeout=FLUSH_SECONDS)
            writer.cancel()
            await asyncio.gather(writer, *self._in_flight, return_exceptions=True)
            with contextlib.suppress(Exception):
                await self.transport.close(self._close_reason or "bye")

    async def _read(self, incoming: AsyncIterator[str | bytes]) -> None:
        async for text in incoming:
            try:
                message = rpc.decode(text)
            except rpc.BadMessage as bad:
                self.send(bad.reply)
                continue
            if isinstance(message, rpc.Response):
                self._answered(message)
            elif isinstance(message, rpc.Notification):
                await self._guarded(self.handler.notified(self, message))
            elif len(self._in_flight) >= self.max_in_flight:
                overloaded = rpc.RpcError(rpc.OVERLOADED, rpc.OVERLOADED_MESSAGE)
                self.send(rpc.error_reply(message.id, overloaded), message.method)
            else:
                task = asyncio.create_task(self._answer(message))
                self._in_flight.add(task)
                task.add_done_callback(self._in_flight.discard)

    async def _answer(self, request: rpc.Request) -> None:
        try:
            result = await self.handler.request(self, request)
        except rpc.RpcError as exc:
            self.send(rpc.error_reply(request.id, exc), request.method)
        except Exception as exc:  # a bug answers the request, never ends the server
            log.exception("%s failed", request.method)
            error = rpc.RpcError(rpc.INTERNAL_ERROR, f"internal error: {exc}")
            self.send(rpc.error_reply(request.id, error), request.method)
        else:
            self.send(rpc.result_reply(request.id, result), request.method)

    @staticmethod
    async def _guarded(work: Awaitable[None]) -> None:
        try:
            await work
        except Exception:
            log.exception("a notification's handler failed")

    def _answered(self, response: rpc.Response) -> None:
        future = self._pending.get(response.id)
        if future is None or future.done():
            return  # an answer nobody waits for (already resolved by another client, or unknown)
        if response.error is not None:
            error = response.error
            future.set_exception(
                rpc.RpcError(int(error.get("code", 0)), str(error.get("message", "")), error.get("data"))
            )
        else:
            future.set_result(response.result)

    async def _write(self) -> None:
        try:
            while (text := await self._outgoing.get()) is not None:
                self._queued_bytes -= len(text)
                await self.transport.send(text)
        except Exception as exc:  # the transport broke: the client is gone
            log.info("%r: sending failed: %s", self, exc)
        finally:
            self._finish()

    def _finish(self) -> None:
        if self.closed.is_set():
            return
        self.closed.set()
        for future in list(self._pending.values()):
            if not future.done():
                future.set_exception(ConnectionClosed(self._close_reason or "the client left"))
        self.handler.closed(self)


def trace(connection_id: int, text: str, answering: str | None) -> None:
    if (path := os.environ.get(TRACE_ENV)) is not None:
        with open_private(Path(path), "a") as out:
            method = f',"answering":"{answering}"' if answering else ""
            out.write(f'{{"connection":{connection_id}{method},"message":{text}}}\n')
