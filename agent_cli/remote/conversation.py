"""A session in a host (``agent app-server``), driven as front ends drive one in their own
process: ``route(op)`` and ``async for event in submit(op)`` with the operations of
``operations.py``, typed events back. So the TUI runs on a host unchanged (``agent --remote``,
``agent attach``): what it sends becomes the protocol's requests, the thread's notifications
become events (notifications.py), the host's questions become approval and elicitation events
whose answers go back as the requests' results (questions.py).

What the protocol carries: a prompt (``turn/start``, with the mode, model, approval policy and
sandbox chosen since the last one, as Codex's TUI sends them), ``Steer``, ``Interrupt``,
``/compact``, ``/review``. The client answers ``/status``, ``/help``, ``/copy``, ``/quit`` and
``/detach`` itself; any other command is refused with the reason (commands.py).

A turn another client started (or the one running when this client attached) comes to the front
end through ``follow_elsewhere``, as a stream of events of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.app_server import rpc
from agent_cli.app_server.client import AppServerClient, ServerError
from agent_cli.commands.catalog import CommandInfo
from agent_cli.commands.conversation import NO_TURN_TO_STEER, Route
from agent_cli.commands.errors import InputError
from agent_cli.commands.typed_input import read_input
from agent_cli.operations import (
    Compact,
    Interrupt,
    Operation,
    RunCommand,
    SetApprovalPolicy,
    SetMode,
    SetModel,
    SetSandbox,
    ShellCommand,
    Steer,
    UserInput,
    UserTurn,
)
from agent_cli.remote import commands
from agent_cli.remote.notifications import ThreadEvents, history_events
from agent_cli.remote.questions import ASKED, answer_of, question_event, withdrawn

log = logging.getLogger("agent_cli.remote")
CODEX_MODES = {"agent": "default", "plan": "plan"}  # ours -> Codex's collaboration modes
CODEX_SANDBOXES = {
    "read-only": "readOnly",
    "workspace-write": "workspaceWrite",
    "danger-full-access": "dangerFullAccess",
}
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
_END = object()


@dataclass(frozen=True, slots=True)
class RemoteThread:
    """The thread as the host described it (``thread/start``, ``thread/resume``)."""

    id: str
    cwd: Path
    model: str
    provider: str
    approval: str
    sandbox: str
    name: str | None = None
    preview: str = ""


class TurnStream:
    """One turn's events, as they arrive, for whoever renders them."""

    def __init__(self) -> None:
        self.id: str | None = None
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


class RemoteConversation:
    memory_shortcut = False  # `# text` saves a memory where the session runs: not from here

    def __init__(self, client: AppServerClient, thread: RemoteThread, history: list[ev.Event]) -> None:
        self.client = client
        self.thread = thread
        self.history = history  # the conversation so far, as events to show
        self.mode = "agent"
        self.pending: dict[str, Any] = {}  # what the next turn/start carries: chosen since the last one
        self.tokens: ev.TokenCount | None = None
        self.events = ThreadEvents()
        self.turn: TurnStream | None = None
        self._elsewhere: Callable[[AsyncIterator[ev.Event]], None] | None = None
        self._unfollowed: TurnStream | None = None  # a turn that came before anyone followed
        self._asked: dict[rpc.RequestId, ev.Event] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self.on_gone: Callable[[str], None] | None = None  # the host closed the connection, or the thread
        self._early: list[dict[str, Any]] | None = []  # what came before the thread was known (adopt)
        client.on_message = self._received
        self._spawn(self._watch_connection())

    # --- opening -----------------------------------------------------------------------------

    @classmethod
    async def start(cls, client: AppServerClient, cwd: Path, settings: dict[str, Any]) -> RemoteConversation:
        """A new thread in ``cwd`` (``settings``: thread/start's model, modelProvider,
        approvalPolicy, sandbox)."""
        conversation = cls(client, RemoteThread("", cwd, "", "", "", ""), [])
        try:
            conversation.adopt(await client.request("thread/start", {"cwd": str(cwd), **settings}))
        except BaseException:
            await conversation.aclose()
            raise
        return conversation

    @classmethod
    async def resume(cls, client: AppServerClient, thread_id: str) -> RemoteConversation:
        """The thread ``thread_id``, live: its history, then the turn running now (if one is)."""
        conversation = cls(client, RemoteThread(thread_id, Path.cwd(), "", "", "", ""), [])
        try:
            answer = await client.request("thread/resume", {"threadId": thread_id})
            conversation.adopt(answer)
        except BaseException:
            await conversation.aclose()
            raise
        conversation.history = history_events(answer["thread"].get("turns") or [])
        return conversation

    def adopt(self, answer: dict[str, Any]) -> None:
        """What thread/start, thread/resume or thread/fork answered."""
        thread = answer["thread"]
        sandbox = answer.get("sandbox") or {}
        self.thread = RemoteThread(
            id=str(thread["id"]),
            cwd=Path(str(answer.get("cwd") or thread.get("cwd") or ".")),
            model=str(answer.get("model") or thread.get("model") or ""),
            provider=str(answer.get("modelProvider") or thread.get("modelProvider") or ""),
            approval=str(answer.get("approvalPolicy") or ""),
            sandbox={v: k for k, v in CODEX_SANDBOXES.items()}.get(str(sandbox.get("type")), "?"),
            name=thread.get("name"),
            preview=str(thread.get("preview") or ""),
        )
        early, self._early = self._early or [], None
        for message in early:  # the reader went on while the answer waited for its reader
            self._received(message)

    # --- what a front end reads -----------------------------------------------------------------

    @property
    def model(self) -> str:
        return self.pending.get("model") or self.thread.model

    @property
    def provider(self) -> str:
        return self.thread.provider

    @property
    def modes(self) -> tuple[str, ...]:
        return tuple(CODEX_MODES)

    @property
    def busy(self) -> bool:
        return self.turn is not None

    def token_count(self) -> ev.TokenCount | None:
        return self.tokens

    def commands(self) -> list[CommandInfo]:
        return commands.remote_commands()

    def history_events(self) -> list[ev.Event]:
        return list(self.history)

    def follow_elsewhere(self, follow: Callable[[AsyncIterator[ev.Event]], None]) -> None:
        """``follow`` gets the events of each turn this client did not start (another client's,
        or the one running when it attached)."""
        self._elsewhere = follow
        if self._unfollowed is not None:
            stream, self._unfollowed = self._unfollowed, None
            follow(stream.events())

    # --- operations -------------------------------------------------------------------------

    def route(self, op: Operation, *, busy: bool | None = None) -> Route:
        busy = self.busy if busy is None else busy
        match op:
            case UserInput():
                try:
                    return self.route(read_input(op.text, op.images), busy=busy)
                except InputError:
                    return Route("queue" if busy else "now", "")
            case UserTurn():
                return Route("queue" if busy else "now")
            case Steer():
                return Route("beside", "steer") if busy else Route("refused", "steer", NO_TURN_TO_STEER)
            case Interrupt():
                return Route("beside", "interrupt")
            case SetMode() | SetModel() | SetApprovalPolicy() | SetSandbox():  # for the next prompt, as locally
                return Route("queue" if busy else "now", type(op).__name__.lower())
            case Compact():
                return Route("queue" if busy else "now", "compact")
            case RunCommand(name=name):
                name = commands.ALIASES.get(name, name)
                if name not in commands.REMOTE_COMMANDS:
                    return Route("refused", name, commands.local_only(name))
                if commands.REMOTE_COMMANDS[name][2]:
                    return Route("beside", name)
                return Route("queue" if busy else "now", name)
            case ShellCommand():
                return Route("refused", "shell", commands.SHELL_HERE)
        return Route("refused", type(op).__name__.lower(), commands.local_only(type(op).__name__.lower()))

    async def submit(self, op: Operation, *, busy: bool | None = None) -> AsyncIterator[ev.Event]:
        if isinstance(op, UserInput):
            try:
                op = read_input(op.text, op.images)
            except InputError as exc:
                yield ev.InputRejected(exc.message, exc.suggestions)
                return
        plan = self.route(op, busy=busy)
        if plan.when == "refused":
            yield ev.InputRejected(plan.reason)
            return
        try:
            async for event in self._apply(op):
                yield event
        except InputError as exc:
            yield ev.InputRejected(exc.message, exc.suggestions)
        except ServerError as exc:
            yield ev.InputRejected(f"the host refused it: {exc.message}")
        except ConnectionError:
            yield ev.Error(HOST_GONE, fatal=True)

    async def _apply(self, op: Operation) -> AsyncIterator[ev.Event]:
        match op:
            case UserTurn(text=text, images=images):
                items = [{"type": "text", "text": text, "text_elements": []}]
                items += [{"type": "localImage", "path": str(path)} for path in images]
                pending, self.pending = self.pending, {}
                params = {"threadId": self.thread.id, "input": items, **pending}
                if "model" in pending:
                    self.thread = replace(self.thread, model=pending["model"])
                async for event in self._run_turn("turn/start", params):
                    yield event
            case Steer(text=text):
                if self.turn is None or self.turn.id is None:
                    raise InputError(NO_TURN_TO_STEER)
                items = [{"type": "text", "text": text, "text_elements": []}]
                params = {"threadId": self.thread.id, "input": items, "expectedTurnId": self.turn.id}
                await self.client.request("turn/steer", params)
            case Interrupt():
                await self._interrupt()
            case SetMode(mode=mode):
                if mode not in CODEX_MODES:
                    raise InputError(f"/mode {mode}: a session in a host takes agent or plan (the protocol's modes)")
                self.choose_mode(mode)
                yield ev.Notice(f"mode: {mode} (from the next prompt)", title="mode")
            case SetModel(model=model):
                self.pending["model"] = model
                yield ev.Notice(f"model: {model} (from the next prompt)", title="model")
            case SetApprovalPolicy(policy=policy):
                self.pending["approvalPolicy"] = "on-request" if policy == "on-failure" else policy
                self.thread = replace(self.thread, approval=policy)
                yield ev.Notice(f"approvals: {policy} (from the next prompt)", title="approvals")
            case SetSandbox(mode=mode):
                self.pending["sandboxPolicy"] = {"type": CODEX_SANDBOXES[mode]}
                self.thread = replace(self.thread, sandbox=mode)
                yield ev.Notice(f"sandbox: {mode} (from the next prompt)", title="sandbox")
            case Compact(focus=focus):
                if focus:
                    raise InputError("over the app-server protocol, /compact takes no focus")
                self.events.compact_trigger = "manual"
                async for event in self._run_turn("thread/compact/start", {"threadId": self.thread.id}):
                    yield event
            case RunCommand(name=name, arguments=arguments):
                async for event in self._command(commands.ALIASES.get(name, name), arguments):
                    yield event

    async def _command(self, name: str, arguments: str) -> AsyncIterator[ev.Event]:
        match name:
            case "review":
                params = {"threadId": self.thread.id, "target": commands.review_target(arguments)}
                async for event in self._run_turn("review/start", params):
                    yield event
            case "mode" if arguments:
                async for event in self._apply(SetMode(arguments.strip())):  # type: ignore[arg-type]
                    yield event
            case "model" if arguments:
                async for event in self._apply(SetModel(arguments.strip())):
                    yield event
            case "mode":
                yield ev.Notice(f"mode: {self.mode}", title="mode")
            case "model":
                yield ev.Notice(f"model: {self.model} via {self.provider}", title="model")
            case "status":
                yield ev.Notice(self.status_text(), title="status")
            case "help":
                yield ev.Notice(commands.help_text(), title="help")
            case "copy":
                if self.events.last_answer is None:
                    raise InputError("there is no answer to copy yet")
                yield ev.CommandAction("copy", self.events.last_answer)
            case "quit" | "detach":
                yield ev.CommandAction("detach")

    def choose_mode(self, mode: str) -> None:
        """The mode from the next prompt on (agent or plan), sent with it as its collaboration mode."""
        self.mode = mode
        self.pending["collaborationMode"] = {"mode": CODEX_MODES[mode], "settings": None}

    def status_text(self) -> str:
        thread = self.thread
        lines = [
            f"session {thread.id} in the host ({self.url or 'the per-user host'})",
            f"folder: {thread.cwd}",
            f"model: {self.model} via {thread.provider}",
            f"mode: {self.mode}",
            f"approvals: {thread.approval}",
            f"sandbox: {thread.sandbox}",
        ]
        if self.tokens is not None:
            total = self.tokens.total
            lines.append(
                f"tokens: {total.input_tokens} in ({total.cached_input_tokens} cached), {total.output_tokens} out"
            )
        return "\n".join(lines)

    url = ""  # where the host was reached ("": the per-user host), said by /status

    # --- turns ------------------------------------------------------------------------------

    async def _run_turn(self, method: str, params: dict[str, Any]) -> AsyncIterator[ev.Event]:
        """Start a turn with ``method`` and yield its events until it ends."""
        stream = TurnStream()
        self.turn = stream
        try:
            answer = await self.client.request(method, params)
        except ServerError as exc:
            if stream.id is None:  # nothing started
                if self.turn is stream:
                    self.turn = None
                raise
            # Another client's turn started just before: this one was refused; show that one instead.
            yield ev.InputRejected(f"the host refused it: {exc.message}")
            answer = None
        except BaseException:
            if self.turn is stream and stream.id is None:
                self.turn = None
            raise
        if stream.id is None and isinstance(answer, dict) and isinstance(answer.get("turn"), dict):
            stream.id = str(answer["turn"]["id"])
        async for event in stream.events():
            yield event

    def interrupt(self) -> None:
        """Stop the running turn (a key handler's call: the request goes out in the background)."""
        self._spawn(self._interrupt())

    async def _interrupt(self) -> None:
        turn = self.turn
        if turn is None:
            return
        params: dict[str, Any] = {"threadId": self.thread.id}
        if turn.id is not None:
            params["turnId"] = turn.id
        with contextlib.suppress(ServerError, ConnectionError, asyncio.TimeoutError):
            await self.client.request("turn/interrupt", params, timeout=30)

    # --- what the host sends ----------------------------------------------------------------

    def _received(self, message: dict[str, Any]) -> None:
        if self._early is not None:
            self._early.append(message)
            return
        method, params = str(message.get("method")), message.get("params") or {}
        if "id" in message:
            self._asked_by_host(message["id"], method, params)
            return
        if params.get("threadId") not in (None, self.thread.id):
            return
        match method:
            case "turn/started":
                self._turn_started(params)
            case "serverRequest/resolved":
                if (event := self._asked.pop(params.get("requestId"), None)) is not None:  # type: ignore[arg-type]
                    withdrawn(event)
            case "thread/closed":
                self._gone("the host closed this session (agent sessions stop, or it was unloaded)")
            case "thread/name/updated":
                self.thread = replace(self.thread, name=params.get("threadName"))
            case _ if method in THREAD_EVENTS:
                self._thread_event(method, params)

    def _turn_started(self, params: dict[str, Any]) -> None:
        turn_id = str((params.get("turn") or {}).get("id", ""))
        stream = self.turn
        if stream is None or (stream.id is not None and stream.id != turn_id):
            stream = self.turn = TurnStream()  # another client's turn, or the one running when we attached
            stream.id = turn_id
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
            self._spawn(self.client.send(message))
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
        self._spawn(self.client.send(rpc.result_reply(request_id, answer_of(event))))

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

    def _spawn(self, work: Any) -> None:
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
