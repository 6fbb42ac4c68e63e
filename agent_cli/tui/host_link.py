"""The app and a host. ``/detach [PROMPT]``: the app leaves and the session goes on in the
per-user host (remote/host.py, started on demand). A session in this process moves there: its
file is synced and let go, and the host takes it up (``thread/resume``; PROMPT, if given, is its
next turn, so the work goes on while nobody watches). A session in a host already just stays
there. And on a session in a host, what the host sends unasked: a turn another client started
(or the one running when the app attached), shown live; the host going away."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from functools import partial
from typing import Any, Protocol

from agent_cli import events as ev
from agent_cli.app_server.client import ServerError
from agent_cli.remote.host import HostError, connect_host
from agent_cli.tui.app_host import AppHost
from agent_cli.tui.hosted import Hosted
from agent_cli.tui.session_switching import SessionRestorer

NOTHING_YET = "nothing to detach yet: no prompt was sent (/detach PROMPT starts it in the background host)"


class DetachHost(AppHost, Protocol):
    session_restorer: SessionRestorer
    detached: str | None  # what to print once the app has left: how to get back to the session

    def exit(self, result: int | None = None, return_code: int = 0) -> None: ...


class FollowingHost(AppHost, Protocol):
    def run_busy(self, body: Callable[[], Awaitable[None]], label: str) -> None: ...
    async def render_events(self, events: AsyncIterator[ev.Event]) -> None: ...
    def set_timer(self, delay: float, callback: Callable[[], Any]) -> object: ...
    def exit(self, result: int | None = None, return_code: int = 0) -> None: ...


GONE_SECONDS = 1.5  # the reason stays on screen this long before the app leaves


def follow_host(app: FollowingHost, remote: Hosted) -> None:
    """A turn the app did not start is shown live, and what is typed meanwhile waits for it as
    for the app's own; when the host closes the connection (or the session), the app says so
    and leaves."""

    def follow(events: AsyncIterator[ev.Event]) -> None:
        app.run_busy(partial(app.render_events, events), "working")

    def gone(why: str) -> None:
        app.run_worker(app.renderer.notice(why, "error", "host"), group="show")
        app.set_timer(GONE_SECONDS, lambda: app.exit(1))

    remote.on_gone = gone
    remote.follow_elsewhere(follow)


def note(thread_id: str) -> str:
    return f"session {thread_id} goes on in the background host\nback to it with: agent attach {thread_id}"


async def detach(app: DetachHost, prompt: str | None) -> None:
    if app.remote is not None:  # attached already: it runs there
        if prompt:
            await app.renderer.notice("/detach PROMPT is for a session in this terminal: send the prompt, then /detach")
            return
        app.exit(0)
        return
    session = app.session
    path = session.rollout.path
    if not path.exists() and not prompt:
        await app.renderer.notice(NOTHING_YET, "warning", "detach")
        return
    app.activity.start("moving the session to the background host")
    cwd, model, provider = app.config.cwd, session.model, app.config.provider.id
    session_id = session.rollout.header.id if path.exists() else None
    await session.aclose()  # synced and unlocked: the host takes the file up
    try:
        thread_id = await hand_over(session_id, str(cwd), model, provider, prompt)
    except (HostError, ServerError, ConnectionError, OSError) as exc:
        app.activity.stop()
        if session_id is not None:  # it goes on here, as it was
            app.switch_to(app.session_restorer(app.config, path))
        await app.renderer.notice(f"the session stays here: {exc}", "error", "detach")
        return
    app.detached = note(thread_id)
    app.exit(0)


async def hand_over(session_id: str | None, cwd: str, model: str, provider: str, prompt: str | None) -> str:
    """The session (``session_id``; a new one in ``cwd`` when None) loaded in the host, ``prompt``
    started there; its thread id."""
    client = await connect_host(start=True)
    assert client is not None
    try:
        if session_id is not None:
            answer = await client.request("thread/resume", {"threadId": session_id})
        else:
            answer = await client.request("thread/start", {"cwd": cwd, "model": model, "modelProvider": provider})
        thread_id = str(answer["thread"]["id"])
        if prompt:
            text = [{"type": "text", "text": prompt, "text_elements": []}]
            await client.request("turn/start", {"threadId": thread_id, "input": text})
        return thread_id
    finally:
        await client.close()
