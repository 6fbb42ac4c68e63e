"""A session in a host (``agent app-server``), driven as front ends drive one in their own
process: ``route(op)`` and ``async for event in submit(op)`` with the operations of
``operations.py``, typed events back. So the TUI runs on a host unchanged (``agent --remote``,
``agent attach``): what it sends becomes the protocol's requests, the thread's notifications
become events and the host's questions approval and elicitation events whose answers go back as
the requests' results (thread_feed.py, notifications.py, questions.py).

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
from agent_cli.remote.notifications import history_events
from agent_cli.remote.thread_feed import HOST_GONE, ThreadFeed

log = logging.getLogger("agent_cli.remote")
CODEX_MODES = {"agent": "default", "plan": "plan"}  # ours -> Codex's collaboration modes
CODEX_SANDBOXES = {
    "read-only": "readOnly",
    "workspace-write": "workspaceWrite",
    "danger-full-access": "dangerFullAccess",
}


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


class RemoteConversation:
    memory_shortcut = False  # `# text` saves a memory where the session runs: not from here

    def __init__(self, client: AppServerClient, thread: RemoteThread, history: list[ev.Event]) -> None:
        self.client = client
        self.thread = thread
        self.history = history  # the conversation so far, as events to show
        self.mode = "agent"
        self.pending: dict[str, Any] = {}  # what the next turn/start carries: chosen since the last one
        self.feed = ThreadFeed(client)  # what the host sends about the thread
        self.feed.on_renamed = lambda name: setattr(self, "thread", replace(self.thread, name=name))

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
        self.feed.known(self.thread.id)

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
        return self.feed.turn is not None

    @property
    def on_gone(self) -> Callable[[str], None] | None:
        return self.feed.on_gone

    @on_gone.setter
    def on_gone(self, callback: Callable[[str], None] | None) -> None:
        self.feed.on_gone = callback

    def token_count(self) -> ev.TokenCount | None:
        return self.feed.tokens

    def commands(self) -> list[CommandInfo]:
        return commands.remote_commands()

    def history_events(self) -> list[ev.Event]:
        return list(self.history)

    def follow_elsewhere(self, follow: Callable[[AsyncIterator[ev.Event]], None]) -> None:
        """``follow`` gets the events of each turn this client did not start (another client's,
        or the one running when it attached)."""
        self.feed.follow_elsewhere(follow)

    async def aclose(self) -> None:
        """Leave: the session and its turn go on in the host."""
        await self.feed.aclose()

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
                turn = self.feed.turn
                if turn is None or turn.id is None:
                    raise InputError(NO_TURN_TO_STEER)
                items = [{"type": "text", "text": text, "text_elements": []}]
                params = {"threadId": self.thread.id, "input": items, "expectedTurnId": turn.id}
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
                self.feed.events.compact_trigger = "manual"
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
                if (answer := self.feed.events.last_answer) is None:
                    raise InputError("there is no answer to copy yet")
                yield ev.CommandAction("copy", answer)
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
        if (tokens := self.feed.tokens) is not None:
            total = tokens.total
            lines.append(
                f"tokens: {total.input_tokens} in ({total.cached_input_tokens} cached), {total.output_tokens} out"
            )
        return "\n".join(lines)

    url = ""  # where the host was reached ("": the per-user host), said by /status

    # --- turns ------------------------------------------------------------------------------

    async def _run_turn(self, method: str, params: dict[str, Any]) -> AsyncIterator[ev.Event]:
        """Start a turn with ``method`` and yield its events until it ends."""
        stream = self.feed.begin()
        try:
            answer = await self.client.request(method, params)
        except ServerError as exc:
            if stream.id is None:  # nothing started
                self.feed.abandon(stream)
                raise
            # Another client's turn started just before: this one was refused; show that one instead.
            yield ev.InputRejected(f"the host refused it: {exc.message}")
            answer = None
        except BaseException:
            self.feed.abandon(stream)
            raise
        if stream.id is None and isinstance(answer, dict) and isinstance(answer.get("turn"), dict):
            stream.id = str(answer["turn"]["id"])
        async for event in stream.events():
            yield event

    def interrupt(self) -> None:
        """Stop the running turn (a key handler's call: the request goes out in the background)."""
        self.feed.spawn(self._interrupt())

    async def _interrupt(self) -> None:
        turn = self.feed.turn
        if turn is None:
            return
        params: dict[str, Any] = {"threadId": self.thread.id}
        if turn.id is not None:
            params["turnId"] = turn.id
        with contextlib.suppress(ServerError, ConnectionError, asyncio.TimeoutError):
            await self.client.request("turn/interrupt", params, timeout=30)
