"""What a host sends about one thread, as turns of typed events: the notifications of the turn
this client started go to its stream; a turn it did not start (another client's, or the one
running when it attached) opens a stream of its own, handed to whoever follows the thread; the
host's questions (approvals, forms) join the running turn's stream as events whose answers go back
as the requests' results; another client's answer withdraws the question here. The connection
closing, or the host closing the thread, ends the running turn and says why."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from typing import Any

from agent_cli import events as ev
from agent_cli.app_server import rpc
from agent_cli.app_server.client import AppServerClient
from agent_cli.remote.notifications import ThreadEvents
from agent_cli.remote.questions import ASKED, answer_of, question_event, withdrawn

THREAD_EVENTS = (
    "turn/started",
    "turn/completed",
    "item/started",
    "item/completed",
    "item/agentMessage/delta",
    "item/reasoning/summaryTextDelta",
    "item/reasoning/textDelta",
    "item/commandExecution/outputDelta",
    "turn/plan/updated",
    "thread/tokenUsage/updated",
    "warning",
    "error",
)
HOST_GONE = "the host closed the connection: the session goes on there if the host does (agent attach)"
THREAD_CLOSED = "the host closed this session (agent sessions stop, or it was unloaded)"
_END = object()


class TurnStream:
    """One turn's events, as they arrive, for whoever renders them."""

    def __init__(self, turn_id: str | None = None) -> None:
        self.id = turn_id
        self.queue: asyncio.Queue[Any] = asyncio.Queue()
        self.ended = False

    def put(self, events: list[ev.Event]) -> None:
        for event in events:
            self.queue.put_nowait(event)

    def end(self) -> None:
        if not self.ended:
            self.ended = True
            self.queue.put_nowait(_END)

    async def events(self) -> AsyncIterator[ev.Event]:
        while (event := await self.queue.get()) is not _END:
            yield event


class ThreadFeed:
    def __init__(self, client: AppServerClient) -> None:
        self.client = client
        self.thread_id: str | None = None  # until the host has said which thread (known())
        self.events = ThreadEvents()
        self.turn: TurnStream | None = None
        self.tokens: ev.TokenCount | None = None
        self.on_gone: Callable[[str], None] | None = None  # the host closed the connection, or the thread
        self.on_renamed: Callable[[str | None], None] | None = None
        self._early: list[dict[str, Any]] = []  # what came before the thread was known
        self._elsewhere: Callable[[AsyncIterator[ev.Event]], None] | None = None
        self._unfollowed: TurnStream | None = None  # a turn that came before anyone followed
        self._asked: dict[rpc.RequestId, ev.Event] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        client.on_message = self.received
        self.spawn(self._watch_connection())

    def known(self, thread_id: str) -> None:
        """The host said which thread this is; what came meanwhile is read now (the reader went
        on while the answer waited for the one who asked)."""
        self.thread_id = thread_id
        early, self._early = self._early, []
        for message in early:
            self.received(message)

    def follow_elsewhere(self, follow: Callable[[AsyncIterator[ev.Event]], None]) -> None:
        self._elsewhere = follow
        if self._unfollowed is not None:
            stream, self._unfollowed = self._unfollowed, None
            follow(stream.events())

    def begin(self) -> TurnStream:
        """The stream of a turn this client is about to start (before its request goes out, so
        the turn's first notifications find it)."""
        self.turn = TurnStream()
        return self.turn

    def abandon(self, stream: TurnStream) -> None:
        """The request for ``stream``'s turn failed before any turn started."""
        if self.turn is stream and stream.id is None:
            self.turn = None

    # --- what the host sends ----------------------------------------------------------------

    def received(self, message: dict[str, Any]) -> None:
        if self.thread_id is None:
            self._early.append(message)
            return
        method, params = str(message.get("method")), message.get("params") or {}
        if "id" in message:
            self._asked_by_host(message["id"], method, params)
            return
        if params.get("threadId") not in (None, self.thread_id):
            return
        match method:
            case "turn/started":
                self._turn_started(params)
            case "serverRequest/resolved":
                if (event := self._asked.pop(params.get("requestId"), None)) is not None:  # type: ignore[arg-type]
                    withdrawn(event)
            case "thread/closed":
                self._gone(THREAD_CLOSED)
            case "thread/name/updated" if self.on_renamed is not None:
                self.on_renamed(params.get("threadName"))
            case _ if method in THREAD_EVENTS:
                self._thread_event(method, params)

    def _turn_started(self, params: dict[str, Any]) -> None:
        turn_id = str((params.get("turn") or {}).get("id", ""))
        stream = self.turn
        if stream is None or (stream.id is not None and stream.id != turn_id):
            stream = self.turn = TurnStream(turn_id)  # another client's turn, or the one running when we attached
            self._follow(stream)
        stream.id = turn_id
        stream.put(self.events.read("turn/started", params))

    def _follow(self, stream: TurnStream) -> None:
        if self._elsewhere is not None:
            self._elsewhere(stream.events())
        else:
            self._unfollowed = stream

    def _thread_event(self, method: str, params: dict[str, Any]) -> None:
        events = self.events.read(method, params)
        for event in events:
            if isinstance(event, ev.TokenCount):
                self.tokens = event
        stream = self.turn
        if stream is None:
            return  # a notification of no turn we know of (it ended before we attached)
        stream.put(events)
        if method == "turn/completed":
            self.turn = None
            stream.end()

    def _asked_by_host(self, request_id: rpc.RequestId, method: str, params: dict[str, Any]) -> None:
        if method not in ASKED:
            message = rpc.error_reply(request_id, rpc.RpcError(rpc.METHOD_NOT_FOUND, f"{method} is not handled here"))
            self.spawn(self.client.send(message))
            return
        item = self.events.started.get(str(params.get("itemId", "")))
        event = question_event(method, params, item)
        self._asked[request_id] = event
        future: asyncio.Future[Any] = event.future  # type: ignore[attr-defined]
        future.add_done_callback(lambda _: self._answered(request_id, event))
        if self.turn is None:
            self.turn = TurnStream()
            self._follow(self.turn)
        self.turn.put([event])

    def _answered(self, request_id: rpc.RequestId, event: ev.Event) -> None:
        if self._asked.pop(request_id, None) is None:
            return  # answered elsewhere first: the host knows
        self.spawn(self.client.send(rpc.result_reply(request_id, answer_of(event))))

    # --- the connection ---------------------------------------------------------------------

    async def _watch_connection(self) -> None:
        await self.client.closed.wait()
        self._gone(HOST_GONE)

    def _gone(self, why: str) -> None:
        if (stream := self.turn) is not None:
            self.turn = None
            stream.put([ev.Error(why, fatal=True), ev.TurnAborted("disconnected")])
            stream.end()
        if self.on_gone is not None:
            self.on_gone(why)

    def spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def aclose(self) -> None:
        """Leave: the session and its turn go on in the host."""
        self.on_gone = None
        with contextlib.suppress(Exception):
            await self.client.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
