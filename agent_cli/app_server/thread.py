"""A loaded thread: one session, the clients subscribed to it, and the turn it runs.

The turn runs in a task of the thread, never of a client: a client that leaves (or never reads)
changes nothing for it, and an approval it left open waits for the next client. Every event
becomes notifications for every subscriber at once (turn_items.py); a client that subscribes
mid-turn first gets the turn as it stands (``TurnItems.snapshot``), then the rest live.
"""

from __future__ import annotations

import asyncio
import logging
import time
import uuid
from collections.abc import AsyncIterator, Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from agent_cli import events as ev
from agent_cli.app_server import questions
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.server_requests import Questions
from agent_cli.app_server.sessions import SessionDoor
from agent_cli.app_server.turn_items import TurnItems
from agent_cli.session import Session

log = logging.getLogger("agent_cli.app_server")
Step = Callable[[], AsyncIterator[ev.Event]]  # one unit of work the turn runs (a setting, a prompt)
Lifecycle = Callable[[str, dict[str, Any]], None]  # thread/* notifications to every client


@dataclass(eq=False)
class Turn:
    id: str
    items: TurnItems
    kind: str = "turn"  # "turn", "compact" or "review"
    history_mark: int = 0  # the history's length when it started: stored turns end there
    review: str | None = None  # a review turn: what it reviews
    started: float = field(default_factory=time.time)
    steps: list[Step] = field(default_factory=list)  # what the turn runs, in order (its settings, then the prompt)
    task: asyncio.Task[None] | None = None
    interrupted: bool = False
    status: str = "inProgress"

    def shape(self, items: list[dict[str, Any]] | None = None, view: str = "notLoaded") -> dict[str, Any]:
        """The ``Turn`` object (no items unless given)."""
        done = self.status != "inProgress"
        return {
            "id": self.id,
            "items": items or [],
            "itemsView": view,
            "status": self.status,
            "error": {"message": self.items.error} if self.status == "failed" and self.items.error else None,
            "startedAt": int(self.started),
            "completedAt": int(time.time()) if done else None,
            "durationMs": int((time.time() - self.started) * 1000) if done else None,
        }


class LoadedThread:
    def __init__(
        self, session: Session, door: SessionDoor, lifecycle: Lifecycle, on_idle: Callable[[LoadedThread], None]
    ):
        self.session = session
        self.door = door
        self.id = door.describe(session)["id"]  # the thread's id: a UUID
        self.session_id = door.describe(session)["session_id"]
        self.cwd = door.describe(session)["cwd"]
        self.subscribers: set[Connection] = set()
        self.turn: Turn | None = None
        self.questions = Questions(self.id)
        self.created = int(time.time())
        self.updated = self.created
        self._lifecycle = lifecycle
        self._on_idle = on_idle  # the host unloads a thread nobody watches and nothing runs in
        self.unload_timer: asyncio.TimerHandle | None = None
        self._tasks: set[asyncio.Future[None]] = set()  # interrupts asked from a callback

    # --- status and clients --------------------------------------------------------------

    @property
    def status(self) -> dict[str, Any]:
        if self.turn is None:
            return {"type": "idle"}
        flags = ["waitingOnApproval"] if self.questions.open else []
        return {"type": "active", "activeFlags": flags}

    def status_changed(self) -> None:
        self._lifecycle("thread/status/changed", {"threadId": self.id, "status": self.status})

    def subscribe(self, connection: Connection) -> None:
        """``connection`` gets this thread's events from now on; mid-turn, the turn so far first."""
        if connection in self.subscribers:
            return
        self.subscribers.add(connection)
        if self.turn is not None:
            connection.notify("turn/started", {"threadId": self.id, "turn": self.turn.shape()})
            for method, params in self.turn.items.snapshot():
                connection.notify(method, params)
            self.questions.show_to(connection)

    def unsubscribe(self, connection: Connection) -> bool:
        if connection not in self.subscribers:
            return False
        self.subscribers.discard(connection)
        return True

    def broadcast(self, method: str, params: dict[str, Any]) -> None:
        for connection in list(self.subscribers):
            connection.notify(method, params)

    # --- turns ---------------------------------------------------------------------------

    def begin(self, steps: list[Step], kind: str = "turn", review: str | None = None) -> Turn:
        """Start a turn running ``steps`` (the caller checked that none runs)."""
        turn_id = str(uuid.uuid4())
        items = TurnItems(self.id, turn_id, self.cwd, self.broadcast)
        turn = Turn(turn_id, items, kind, len(self.door.history(self.session)), review, steps=list(steps))
        self.turn = turn
        turn.task = asyncio.get_running_loop().create_task(self._run(turn), name=f"turn {turn_id}")
        return turn

    async def interrupt(self) -> None:
        if self.turn is not None:
            self.turn.interrupted = True
            self.turn.steps.clear()
            await self.door.interrupt(self.session)

    async def _run(self, turn: Turn) -> None:
        await asyncio.sleep(0)  # the turn/start answer goes out before the turn's notifications
        self.updated = int(time.time())
        self.status_changed()
        self.broadcast("turn/started", {"threadId": self.id, "turn": turn.shape()})
        aborted = failed = False
        if turn.review is not None:
            turn.items.enter_review(turn.review)
        try:
            while turn.steps and not turn.interrupted:
                async for event in turn.steps.pop(0)():
                    aborted |= isinstance(event, ev.TurnAborted)
                    failed |= isinstance(event, (ev.TurnFailed, ev.InputRejected))
                    self._on_event(turn, event)
                    await asyncio.sleep(0)  # each client's writer sends it before the next event comes
        except Exception as exc:  # a bug ends the turn as failed, never the server
            log.exception("turn %s failed", turn.id)
            turn.items.feed(ev.Error(f"internal error: {type(exc).__name__}: {exc}", fatal=True))
            failed = True
        finally:
            turn.status = "interrupted" if aborted or turn.interrupted else ("failed" if failed else "completed")
            self._end(turn)

    def _on_event(self, turn: Turn, event: ev.Event) -> None:
        if isinstance(event, ev.ApprovalRequest):
            turn.items.feed(event)
            self._ask_approval(turn, event)
        elif isinstance(event, ev.ElicitationRequest):
            self._ask_elicitation(turn, event)
        else:
            turn.items.feed(event)

    def _end(self, turn: Turn) -> None:
        turn.items.close_open()
        if turn.review is not None:
            turn.items.exit_review()
        self.questions.clear()
        self.turn = None
        self.updated = int(time.time())
        self.status_changed()
        # No items: the item notifications carried them (as Codex does), and a long answer is not sent twice
        self.broadcast("turn/completed", {"threadId": self.id, "turn": turn.shape()})
        self._on_idle(self)

    # --- questions -----------------------------------------------------------------------

    def _ask_approval(self, turn: Turn, event: ev.ApprovalRequest) -> None:
        item_id = turn.items.item_of_call(event.call_id)
        method, params = questions.approval_request(event, self.id, turn.id, item_id, self.cwd)

        def answered(result: Any | None) -> None:
            decision, cancel = questions.approval_decision(result)
            if decision.decision == "deny":
                turn.items.declined.add(event.call_id)
            if event.future is not None and not event.future.done():
                event.future.set_result(decision)
            if cancel:
                self._background(self.interrupt())
            if self.turn is turn and turn.status == "inProgress":
                self.status_changed()  # no longer waiting on an approval

        self.questions.ask(method, params, answered, self.subscribers)
        self.status_changed()

    def _background(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _ask_elicitation(self, turn: Turn, event: ev.ElicitationRequest) -> None:
        method, params = questions.elicitation_request(event, self.id, turn.id)

        def answered(result: Any | None) -> None:
            if event.future is not None and not event.future.done():
                event.future.set_result(questions.elicitation_answer(result))

        self.questions.ask(method, params, answered, self.subscribers)
