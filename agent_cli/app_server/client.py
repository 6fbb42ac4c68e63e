"""A small client of the app-server protocol, over a WebSocket (TCP or Unix socket) or a child's
stdio: requests with their answers, the notifications as they come, the server's own requests
(approvals) to answer. Our front ends and the tests use it::

    async with await AppServerClient.connect("ws://127.0.0.1:4500", token=TOKEN) as client:
        await client.initialize("my-client")
        thread = (await client.request("thread/start", {"cwd": "/repo"}))["thread"]
        await client.request("turn/start", {"threadId": thread["id"], "input": [{"type": "text", "text": "hi"}]})
        completed = await client.notification("turn/completed")

Every message received stays in ``received`` (a test checks them against Codex's schema). Over a
Unix socket it first checks who listens (``checked_unix_socket``) and sends nothing to a sandbox.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import socket
import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from agent_cli import socket_peer
from agent_cli.app_server import rpc

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection

MAX_MESSAGE = 64 * 1024 * 1024


class ServerError(Exception):
    """The server answered a request with an error."""

    def __init__(self, method: str, error: dict[str, Any]) -> None:
        super().__init__(f"{method}: {error.get('message')} ({error.get('code')})")
        self.code = error.get("code")
        self.message = str(error.get("message", ""))


@dataclass(frozen=True, slots=True)
class ServerRequest:
    id: rpc.RequestId
    method: str
    params: dict[str, Any]


class Channel(Protocol):
    async def send(self, text: str) -> None: ...

    def texts(self) -> AsyncIterator[str]: ...

    async def close(self) -> None: ...


class WebSocketChannel:
    def __init__(self, websocket: ClientConnection) -> None:
        self.websocket = websocket

    async def send(self, text: str) -> None:
        await self.websocket.send(text)

    async def texts(self) -> AsyncIterator[str]:
        from websockets.exceptions import ConnectionClosed  # noqa: PLC0415 - loaded with the connection

        with contextlib.suppress(ConnectionClosed):
            async for message in self.websocket:
                yield message if isinstance(message, str) else message.decode("utf-8")

    async def close(self) -> None:
        await self.websocket.close()


class ProcessChannel:
    """A server started as a child, talking on its stdin and stdout."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process

    async def send(self, text: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((text + "\n").encode("utf-8"))
        await self.process.stdin.drain()

    async def texts(self) -> AsyncIterator[str]:
        assert self.process.stdout is not None
        while line := await self.process.stdout.readline():
            if line.strip():
                yield line.decode("utf-8")

    async def close(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.process.wait(), timeout=15)


class AppServerClient:
    def __init__(self, channel: Channel) -> None:
        self.channel = channel
        self.received: list[dict[str, Any]] = []
        self.notifications: list[tuple[str, dict[str, Any]]] = []
        self.requests: asyncio.Queue[ServerRequest] = asyncio.Queue()
        self._answers: dict[rpc.RequestId, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._arrived = asyncio.Event()
        self.closed = asyncio.Event()
        # A front end's own handling: each notification and server request as it comes, then
        # nothing is kept (a long session would keep every delta otherwise).
        self.on_message: Callable[[dict[str, Any]], None] | None = None
        self._reader = asyncio.ensure_future(self._read())

    # --- connecting ----------------------------------------------------------------------

    @classmethod
    async def connect(
        cls, url: str, token: str | None = None, origin: str | None = None, sock: socket.socket | None = None
    ) -> AppServerClient:
        """``ws://HOST:PORT`` or ``unix://PATH``; ``sock``: that Unix socket, connected already
        (its peer checked before a byte is sent). The WebSocket library loads here: a front end
        that never connects (`agent sessions` with no host running) never loads it."""
        from websockets.asyncio.client import connect, unix_connect  # noqa: PLC0415

        headers = {"Authorization": f"Bearer {token}"} if token else {}
        if origin is not None:
            headers["Origin"] = origin
        options: dict[str, Any] = {"additional_headers": headers, "max_size": MAX_MESSAGE, "compression": None}
        if sock is None and url.startswith("unix://"):
            sock = await checked_unix_socket(url[len("unix://") :])
        if sock is not None:
            websocket = await unix_connect(uri="ws://localhost/", sock=sock, **options)
        else:
            websocket = await connect(url, **options)
        return cls(WebSocketChannel(websocket))

    @classmethod
    async def spawn(cls, argv: Sequence[str], **options: Any) -> AppServerClient:
        """A server started as ``argv`` on stdio (``options`` for create_subprocess_exec: env, cwd)."""
        process = await asyncio.create_subprocess_exec(
            *argv, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, limit=MAX_MESSAGE, **options
        )
        return cls(ProcessChannel(process))

    async def __aenter__(self) -> AppServerClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()

    async def close(self) -> None:
        await self.channel.close()
        with contextlib.suppress(asyncio.TimeoutError, asyncio.CancelledError):
            await asyncio.wait_for(self._reader, timeout=10)

    # --- talking -------------------------------------------------------------------------

    async def initialize(self, name: str = "agent-cli-client", opt_out: Sequence[str] = ()) -> dict[str, Any]:
        capabilities = {"experimentalApi": True, "optOutNotificationMethods": list(opt_out) or None}
        result = await self.request(
            "initialize", {"clientInfo": {"name": name, "version": "1"}, "capabilities": capabilities}
        )
        await self.notify("initialized")
        return result

    async def request(self, method: str, params: dict[str, Any] | None = None, timeout: float = 60) -> Any:
        request_id = next(self._ids)
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._answers[request_id] = future
        await self.send(rpc.request(request_id, method, params or {}))
        answer = await asyncio.wait_for(future, timeout)
        if "error" in answer:
            raise ServerError(method, answer["error"])
        return answer.get("result")

    async def notify(self, method: str, params: dict[str, Any] | None = None) -> None:
        message = rpc.notification(method, params) if params is not None else {"method": method}
        await self.send(message)

    async def respond(self, request: ServerRequest, result: Any) -> None:
        await self.send(rpc.result_reply(request.id, result))

    async def send(self, message: dict[str, Any]) -> None:
        await self.channel.send(rpc.encode(message))

    async def send_text(self, text: str) -> None:
        """Anything at all, malformed JSON included (tests of the server's answers to it)."""
        await self.channel.send(text)

    # --- waiting -------------------------------------------------------------------------

    async def notification(
        self, method: str, where: Callable[[dict[str, Any]], bool] = lambda _: True, timeout: float = 60, after: int = 0
    ) -> dict[str, Any]:
        """The params of the first ``method`` notification (from index ``after`` of
        ``notifications``) that ``where`` accepts, waiting for it."""
        deadline = time.monotonic() + timeout
        while True:
            for name, params in self.notifications[after:]:
                if name == method and where(params):
                    return params
            if self.closed.is_set():
                raise ConnectionError(f"the server closed the connection before {method}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"no {method} within {timeout} s")
            self._arrived.clear()
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(self._arrived.wait(), left)

    async def server_request(self, timeout: float = 60) -> ServerRequest:
        return await asyncio.wait_for(self.requests.get(), timeout)

    def seen(self, method: str) -> list[dict[str, Any]]:
        return [params for name, params in self.notifications if name == method]

    async def _read(self) -> None:
        try:
            async for text in self.channel.texts():
                message = json.loads(text)
                if self.on_message is not None and "method" in message:
                    self.on_message(message)
                    continue
                if self.on_message is None:
                    self.received.append(message)
                if "method" in message and "id" in message:
                    self.requests.put_nowait(ServerRequest(message["id"], message["method"], message.get("params", {})))
                elif "method" in message:
                    self.notifications.append((message["method"], message.get("params", {})))
                elif (future := self._answers.pop(message.get("id"), None)) is not None and not future.done():
                    future.set_result(message)
                self._arrived.set()
        finally:
            self.closed.set()
            self._arrived.set()
            for future in self._answers.values():
                if not future.done():
                    future.set_exception(ConnectionError("the server closed the connection"))


HANDSHAKE_REFUSALS = {
    401: "a valid token is needed (--remote-auth-token-env VAR names the variable that holds it)",
    403: "this client may not connect (another user, a sandbox, or a request from a web page)",
}


def refusal(exc: BaseException) -> str | None:
    """Why the server turned the connection away, when ``exc`` says it did (None otherwise)."""
    from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI  # noqa: PLC0415

    if isinstance(exc, InvalidStatus):
        status = exc.response.status_code
        return f"the server refused the connection ({status}): {HANDSHAKE_REFUSALS.get(status, 'see its log')}"
    if isinstance(exc, (InvalidHandshake, InvalidURI)):
        return f"no app-server answered there: {exc}"
    return None


class ServerRefused(ConnectionError):
    """The process listening on a Unix socket is not the user's unconfined server; nothing was sent."""


async def checked_unix_socket(path: str) -> socket.socket:
    """A connection to ``path`` once the process listening there is known to be the user's own,
    confined exactly as we are (socket_peer.py, as the warm exec launcher checks its server): a
    sandboxed command that took the socket's place where sandboxes may write (``/tmp``, a
    workspace) would otherwise get the handshake, then every prompt and answer. Nothing is sent
    before the check."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.setblocking(False)
    try:
        await asyncio.get_running_loop().sock_connect(sock, path)
        if not socket_peer.trusted(sock):
            raise ServerRefused(
                f"unix://{path}: the process listening there is another user's, or confined otherwise than this one "
                "(a sandbox); nothing was sent"
            )
    except BaseException:
        sock.close()
        raise
    return sock


def thread_text(text: str) -> list[dict[str, Any]]:
    """A ``UserInput`` list of one text."""
    return [{"type": "text", "text": text, "text_elements": []}]
