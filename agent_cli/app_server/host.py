"""The threads this server has loaded and the clients connected to it.

A thread stays loaded while a client is subscribed or a turn runs; once neither holds for
``idle_unload`` seconds it is closed (its session file synced and unlocked, so `agent resume`
takes it up) and every client hears ``thread/closed``. Lifecycle notifications (``thread/started``,
``thread/status/changed``, ``thread/closed``...) go to every initialized client, turn and item
notifications to a thread's subscribers only.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from agent_cli.app_server import history, rpc
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.sessions import SessionDoor, Settings
from agent_cli.app_server.shapes import thread_shape
from agent_cli.app_server.thread import LoadedThread, Step, Turn
from agent_cli.session import Session

log = logging.getLogger("agent_cli.app_server")


class ThreadHost:
    def __init__(self, door: SessionDoor, idle_unload: float) -> None:
        self.door = door
        self.idle_unload = idle_unload
        self.threads: dict[str, LoadedThread] = {}
        self.connections: set[Connection] = set()
        self._loading: dict[str, asyncio.Future[LoadedThread]] = {}  # one load per thread at a time
        self._closing: set[asyncio.Task[None]] = set()

    # --- clients ----------------------------------------------------------------------------

    def lifecycle(self, method: str, params: dict[str, Any]) -> None:
        for connection in list(self.connections):
            if connection.initialized:
                connection.notify(method, params)

    def connected(self, connection: Connection) -> None:
        self.connections.add(connection)

    def disconnected(self, connection: Connection) -> None:
        """A client left: its subscriptions end; its threads and their turns go on."""
        self.connections.discard(connection)
        for thread in list(self.threads.values()):
            if thread.unsubscribe(connection):
                self.maybe_idle(thread)

    @property
    def in_use(self) -> bool:
        """A thread is loaded (or loading), or a client is connected."""
        return bool(self.threads or self._loading or self.connections)

    # --- loading ----------------------------------------------------------------------------

    def add(self, session: Session) -> LoadedThread:
        thread = LoadedThread(session, self.door, self.lifecycle, self.maybe_idle)
        self.threads[thread.id] = thread
        return thread

    def announce(self, thread: LoadedThread, connection: Connection, forked_from: str | None = None) -> None:
        """A new thread: its client subscribes, every client hears ``thread/started``."""
        self.attach(thread, connection)
        self.lifecycle("thread/started", {"thread": self.shape(thread, forked_from=forked_from)})

    def find(self, ref: str) -> LoadedThread | None:
        """A loaded thread by its id or its session's id, or a unique prefix of either."""
        if (thread := self.threads.get(ref)) is not None:
            return thread
        found = [t for t in self.threads.values() if t.id.startswith(ref) or t.session_id.startswith(ref)]
        return found[0] if len(found) == 1 else None

    def require(self, ref: str) -> LoadedThread:
        if (thread := self.find(ref)) is None:
            raise rpc.invalid_request(f"thread {ref} is not loaded: thread/resume it first")
        return thread

    def loaded(self, ref: str) -> Session | None:
        thread = self.find(ref)
        return thread.session if thread is not None else None

    def begin(self, thread: LoadedThread, steps: list[Step], kind: str = "turn", review: str | None = None) -> Turn:
        if thread.unload_timer is not None:
            thread.unload_timer.cancel()
            thread.unload_timer = None
        return thread.begin(steps, kind, review)

    async def load(self, thread_id: str, settings: Settings) -> LoadedThread:
        """The loaded thread ``thread_id`` (by its full id, a prefix or its name), loading it
        from its session file when no client has it open."""
        if (thread := self.find(thread_id)) is not None:
            return thread
        thread_id = await asyncio.to_thread(self.door.resolve_id, thread_id)
        if (thread := self.threads.get(thread_id)) is not None:
            return thread
        if (pending := self._loading.get(thread_id)) is not None:
            return await asyncio.shield(pending)
        future: asyncio.Future[LoadedThread] = asyncio.get_running_loop().create_future()
        self._loading[thread_id] = future
        try:
            thread = self.add(await self.door.resume(thread_id, settings))
            future.set_result(thread)
            return thread
        except BaseException as exc:
            future.set_exception(exc)
            future.exception()  # retrieved: nobody else may be waiting
            raise
        finally:
            del self._loading[thread_id]

    def attach(self, thread: LoadedThread, connection: Connection) -> None:
        if thread.unload_timer is not None:
            thread.unload_timer.cancel()
            thread.unload_timer = None
        thread.subscribe(connection)

    def detach(self, thread: LoadedThread, connection: Connection) -> bool:
        found = thread.unsubscribe(connection)
        self.maybe_idle(thread)
        return found

    # --- unloading --------------------------------------------------------------------------

    def maybe_idle(self, thread: LoadedThread) -> None:
        """Nobody watches and nothing runs: unload after ``idle_unload`` seconds of that."""
        if thread.subscribers or thread.turn is not None or thread.unload_timer is not None:
            return
        if self.threads.get(thread.id) is not thread:
            return
        loop = asyncio.get_running_loop()
        thread.unload_timer = loop.call_later(self.idle_unload, lambda: self._spawn(self.unload(thread)))

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)

    async def unload(self, thread: LoadedThread, forced: bool = False) -> None:
        """Close the thread's session (``forced``: even with clients subscribed; never mid-turn)."""
        thread.unload_timer = None
        if (thread.subscribers and not forced) or thread.turn is not None or self.threads.get(thread.id) is not thread:
            return
        del self.threads[thread.id]
        await self.door.close(thread.session)
        self.lifecycle("thread/status/changed", {"threadId": thread.id, "status": {"type": "notLoaded"}})
        self.lifecycle("thread/closed", {"threadId": thread.id})

    async def stop(self, thread: LoadedThread) -> None:
        """End a thread now (``agent sessions stop``): its turn interrupted, its session closed
        with every process it started, its clients told (``thread/closed``)."""
        await thread.interrupt()
        if thread.turn is not None and thread.turn.task is not None:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(thread.turn.task), timeout=30)
        if thread.unload_timer is not None:
            thread.unload_timer.cancel()
        await self.unload(thread, forced=True)

    async def aclose(self) -> None:
        """The server stops: every running turn is interrupted, every session closed (twice is harmless)."""
        for thread in list(self.threads.values()):
            if thread.unload_timer is not None:
                thread.unload_timer.cancel()
            await thread.interrupt()
        for thread in list(self.threads.values()):
            if thread.turn is not None and thread.turn.task is not None:
                with contextlib.suppress(Exception, asyncio.CancelledError):
                    await asyncio.wait_for(thread.turn.task, timeout=10)
            with contextlib.suppress(Exception):
                await self.door.close(thread.session)
        self.threads.clear()
        await asyncio.gather(*self._closing, return_exceptions=True)

    # --- what clients see -------------------------------------------------------------------

    def shape(self, thread: LoadedThread, with_turns: bool = False, forked_from: str | None = None) -> dict[str, Any]:
        described = self.door.describe(thread.session)
        items = self.door.history(thread.session)
        turns = history.stored_turns(thread.id, items, thread.cwd) if with_turns else []
        if with_turns and thread.turn is not None:  # the running turn is shown live, not from the history
            turns = turns[: len(history.split_turns(items[: thread.turn.history_mark]))]
        return thread_shape(
            thread_id=thread.id,
            cwd=described["cwd"],
            provider=described["provider"],
            model=described["model"],
            created=thread.created,
            updated=thread.updated,
            preview=history.preview(items),
            status=thread.status,
            path=described["path"],
            name=self.door.name_of(thread.session_id),
            turns=turns,
            forked_from=forked_from,
        )
