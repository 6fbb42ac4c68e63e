"""``thread/*``: start, resume (attach), fork, read, list, archive, name, unsubscribe, compact.

Threads are our sessions: a thread's id is its session's id, its history the session file's, and
a thread started here resumes with `agent resume ID` once unloaded (and the other way round).
Answers go out before the notifications they cause (``after_reply``): a client hears of a thread
it started, or the rest of a turn it attached to, once it knows the thread."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_cli.app_server import history, rpc
from agent_cli.app_server.connection import Connection
from agent_cli.app_server.dispatch import Method, text_param
from agent_cli.app_server.host import ThreadHost
from agent_cli.app_server.sessions import OUR_APPROVAL, SANDBOX_MODES, Settings
from agent_cli.app_server.shapes import SOURCE, stored_thread, thread_settings
from agent_cli.app_server.thread import LoadedThread

DEFAULT_PAGE = 50
STOP = "agent/thread/stop"  # an extension of ours: Codex's protocol has no way to end a loaded thread


def after_reply(callback: Callable[[], None]) -> None:
    """Run ``callback`` once the answer being prepared has been queued."""
    asyncio.get_running_loop().call_soon(callback)


def settings_of(params: dict[str, Any]) -> Settings:
    cwd = params.get("cwd")
    approval = params.get("approvalPolicy")
    sandbox = params.get("sandbox")
    return Settings(
        cwd=Path(cwd).expanduser() if isinstance(cwd, str) and cwd else None,
        model=params.get("model") if isinstance(params.get("model"), str) else None,
        provider=params.get("modelProvider") if isinstance(params.get("modelProvider"), str) else None,
        approval=OUR_APPROVAL.get(approval) if isinstance(approval, str) else None,
        sandbox=sandbox if sandbox in SANDBOX_MODES else None,
    )


def thread_methods(host: ThreadHost) -> dict[str, Method]:
    door = host.door

    def answer(thread: LoadedThread, with_turns: bool = False, forked_from: str | None = None) -> dict[str, Any]:
        return thread_settings(door.describe(thread.session), host.shape(thread, with_turns, forked_from))

    async def start(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("ephemeral"):
            raise rpc.invalid_request("ephemeral threads are not supported: every thread is a saved session")
        thread = host.add(await door.start(settings_of(params)))
        after_reply(lambda: host.announce(thread, connection))
        return answer(thread)

    async def resume(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = await host.load(str(text_param(params, "threadId")), settings_of(params))
        after_reply(lambda: host.attach(thread, connection))
        return answer(thread, with_turns=not params.get("excludeTurns"))

    async def fork(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        if params.get("ephemeral"):
            raise rpc.invalid_request("ephemeral threads are not supported: every thread is a saved session")
        source = str(text_param(params, "threadId"))
        thread = host.add(await door.fork(host.loaded(source), source, settings_of(params)))
        after_reply(lambda: host.announce(thread, connection, forked_from=source))
        return answer(thread, with_turns=not params.get("excludeTurns"), forked_from=source)

    async def read(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread_id = str(text_param(params, "threadId"))
        with_turns = bool(params.get("includeTurns"))
        if (thread := host.find(thread_id)) is not None:
            return {"thread": host.shape(thread, with_turns)}
        loaded = await asyncio.to_thread(door.load, thread_id)
        stored = await asyncio.to_thread(door.stored_one, loaded.path)
        shaped = stored_thread(stored)
        if with_turns:
            shaped["turns"] = history.stored_turns(stored.id, loaded.items, stored.cwd)
        return {"thread": shaped}

    async def list_threads(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        kinds = params.get("sourceKinds")
        if isinstance(kinds, list) and kinds and SOURCE not in kinds:
            return {"data": [], "nextCursor": None}
        cwd = params.get("cwd")
        stored = await asyncio.to_thread(
            door.stored, cwd if isinstance(cwd, str) else None, bool(params.get("archived"))
        )
        if isinstance(cwd, list):
            stored = [s for s in stored if s.cwd in cwd]
        if isinstance(term := params.get("searchTerm"), str) and term:
            stored = [s for s in stored if term in s.preview or term in (s.name or "")]
        if params.get("sortKey") == "created_at":
            stored.sort(key=lambda s: s.created, reverse=True)
        start = int(params.get("cursor") or 0)
        limit = int(params.get("limit") or DEFAULT_PAGE)
        page = stored[start : start + limit]
        data = [stored_thread(s, loaded.status if (loaded := host.threads.get(s.id)) else None) for s in page]
        more = start + limit < len(stored)
        return {"data": data, "nextCursor": str(start + limit) if more else None}

    async def loaded_list(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        return {"data": list(host.threads), "nextCursor": None}

    async def unsubscribe(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = host.find(str(text_param(params, "threadId")))
        if thread is None:
            return {"status": "notLoaded"}
        return {"status": "unsubscribed" if host.detach(thread, connection) else "notSubscribed"}

    async def set_name(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        ref = str(text_param(params, "threadId"))
        name = params.get("name")
        if not isinstance(name, str):
            raise rpc.invalid_params("name must be a string")
        thread = host.find(ref)
        session_id = thread.session_id if thread is not None else await asyncio.to_thread(door.session_id_of, ref)
        door.set_name(session_id, name.strip() or None)
        thread_id = thread.id if thread is not None else door.resolve_id(session_id)
        host.lifecycle("thread/name/updated", {"threadId": thread_id, "threadName": name.strip() or None})
        return {}

    async def archive(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        ref = str(text_param(params, "threadId"))
        if (thread := host.find(ref)) is not None:
            if thread.turn is not None:
                raise rpc.invalid_request("a turn is running in this thread: interrupt it first")
            await host.unload(thread, forced=True)
        thread_id = await asyncio.to_thread(door.resolve_id, ref)
        await asyncio.to_thread(door.archive, thread_id)
        host.lifecycle("thread/archived", {"threadId": thread_id})
        return {}

    async def unarchive(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread_id = str(text_param(params, "threadId"))
        await asyncio.to_thread(door.unarchive, thread_id)
        host.lifecycle("thread/unarchived", {"threadId": thread_id})
        return {"thread": stored_thread(await asyncio.to_thread(door.stored_one, door.locate(thread_id)))}

    async def compact(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        thread = host.require(str(text_param(params, "threadId")))
        if thread.turn is not None:
            raise rpc.invalid_request("a turn is running in this thread: wait for it or interrupt it")
        host.begin(thread, [lambda: door.compact(thread.session)], "compact")
        return {}

    async def stop(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        """Ours, not Codex's (``agent sessions stop``): end a loaded thread now."""
        ref = str(text_param(params, "threadId"))
        thread = host.find(ref) or host.threads.get(await asyncio.to_thread(door.resolve_id, ref))
        if thread is None:
            raise rpc.invalid_request(f"{ref} is not running in this host")
        await host.stop(thread)
        return {}

    async def turns_list(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        turns = await stored_or_loaded_turns(host, str(text_param(params, "threadId")))
        if params.get("itemsView") == "notLoaded":
            turns = [{**turn, "items": [], "itemsView": "notLoaded"} for turn in turns]
        return page(turns, params)

    async def items_list(connection: Connection, params: dict[str, Any]) -> dict[str, Any]:
        turns = await stored_or_loaded_turns(host, str(text_param(params, "threadId")))
        wanted = params.get("turnId")
        entries = [
            {"turnId": turn["id"], "item": item}
            for turn in turns
            if wanted in (None, turn["id"])
            for item in turn["items"]
        ]
        return page(entries, params)

    return {
        "thread/start": start,
        "thread/resume": resume,
        "thread/fork": fork,
        "thread/read": read,
        "thread/list": list_threads,
        "thread/loaded/list": loaded_list,
        "thread/unsubscribe": unsubscribe,
        "thread/name/set": set_name,
        "thread/archive": archive,
        "thread/unarchive": unarchive,
        "thread/compact/start": compact,
        "thread/turns/list": turns_list,
        "thread/items/list": items_list,
        STOP: stop,
    }


async def stored_or_loaded_turns(host: ThreadHost, thread_id: str) -> list[dict[str, Any]]:
    if (thread := host.find(thread_id)) is not None:
        return host.shape(thread, with_turns=True)["turns"]
    loaded = await asyncio.to_thread(host.door.load, thread_id)
    return history.stored_turns(loaded.header.id, loaded.items, loaded.header.cwd)


def page(entries: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """Newest first unless ``sortDirection`` is asc; the cursor is an offset in that order."""
    ordered = entries if params.get("sortDirection") == "asc" else entries[::-1]
    try:
        start = int(params.get("cursor") or 0)
    except ValueError:
        start = 0  # a cursor of another server's making: from the start
    limit = int(params.get("limit") or DEFAULT_PAGE)
    more = start + limit < len(ordered)
    return {"data": ordered[start : start + limit], "nextCursor": str(start + limit) if more else None}
