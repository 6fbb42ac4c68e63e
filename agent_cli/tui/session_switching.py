"""The app going on with another session: ``/new`` (``/clear``), ``/login``'s choice, ``/resume``
(picked from a list without an id), ``/worktree NAME``; and what the transcript shows of a
session it opens: the banner, then a resumed conversation as it was."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from agent_cli.commands.worktree_commands import config_in
from agent_cli.config import Config
from agent_cli.display import home_relative
from agent_cli.operations import ShellCommand
from agent_cli.session import Session
from agent_cli.session.hook_events import cleared
from agent_cli.store.catalog import SessionSummary
from agent_cli.store.replay import replay_events
from agent_cli.store.rollout import RolloutError
from agent_cli.tui import resuming
from agent_cli.tui.app_host import AppHost
from agent_cli.tui.screens.session_picker import SessionPickerScreen
from agent_cli.tui.sent_input import QueuedOperation
from agent_cli.tui.welcome import welcome_notes
from agent_cli.tui.widgets.welcome_banner import WelcomeBanner

SessionFactory = Callable[[Config], Session]
SessionRestorer = Callable[[Config, Path], Session]


def banner(app: AppHost) -> WelcomeBanner:
    conversation = app.conversation
    if app.remote is not None:  # where it runs: the host's folder
        return WelcomeBanner(conversation.model, conversation.provider, home_relative(app.remote.thread.cwd), [])
    network = app.session.approvals.network
    # what runs without asking, and where it reaches; /init when there is no AGENTS.md
    notes = welcome_notes(
        app.config, network.mode if network is not None else "all" if app.config.network_access else "off"
    )
    return WelcomeBanner(conversation.model, conversation.provider, home_relative(app.config.cwd), notes)


async def show_conversation(app: AppHost) -> None:
    """The banner, then a resumed session's conversation and what resuming found."""
    await app.transcript.add(banner(app))
    if app.remote is not None:  # a session in a host: its history as the host tells it
        await app.renderer.replay(app.remote.history_events())
        if (count := app.remote.token_count()) is not None:
            app.status.set_tokens(count)
        return
    session = app.session
    resumed = getattr(session, "resumed", None)
    if not session.history.items and resumed is None:
        return
    await app.renderer.replay(replay_events(list(session.history.items)))
    await app.renderer.replay(resumed.events() if resumed is not None else ())
    app.status.set_tokens(session.token_count_event())


async def fresh_transcript(app: AppHost, note: str = "new session started") -> None:
    await app.transcript.clear()
    await app.transcript.add(banner(app))
    await app.renderer.notice(note, "info")


def new_session(
    app: AppHost, factory: SessionFactory, config: Config | None = None, note: str = "new session started"
) -> None:
    """``/new`` (``/clear``), or a session on another config (``/login``'s choice)."""
    session = factory(config or app.next_config())
    cleared(app.session.hooks, session.hooks)  # SessionEnd and the next SessionStart say "clear"
    app.switch_to(session, config)
    app.run_worker(fresh_transcript(app, note), group="show")


async def resume_session(app: AppHost, restorer: SessionRestorer, ref: str | None) -> None:
    """``/resume [id]``: continue a saved session instead of this one. Runs inside the command's
    busy worker, so nothing is sent while the user picks."""
    home, current = app.config.agent_home, app.session.rollout.path
    try:
        if ref is not None:
            path = await asyncio.to_thread(resuming.find_saved, home, ref, current)
        else:
            path = await pick_session(app, await asyncio.to_thread(resuming.saved_sessions, home, current))
            if path is None:
                return
        app.activity.start("resuming")
        session = await asyncio.to_thread(restorer, app.next_config(), path)
    except (RolloutError, OSError) as exc:
        await app.renderer.notice(resuming.failure_text(exc), "error", "resume")
        return
    moved = session.config.cwd != app.config.cwd  # it ran in a worktree: the app goes there with it
    app.switch_to(session, config_in(app.config, session.config.cwd) if moved else None)
    await app.transcript.clear()
    await show_conversation(app)
    if note := resuming.model_note(session, path, app.config):
        await app.renderer.notice(note, "info", "model")


async def go_to_folder(app: AppHost, factory: SessionFactory, folder: Path, setup: str | None = None) -> None:
    """``/worktree NAME``: a new session in ``folder`` with this one's settings; ``setup`` (a new
    worktree's set-up command) runs there first."""
    config = config_in(app.next_config(), folder)
    app.switch_to(factory(config), config)
    await fresh_transcript(app)
    if setup:
        app.queue.insert(0, QueuedOperation(ShellCommand(setup)))


async def pick_session(app: AppHost, sessions: list[SessionSummary]) -> Path | None:
    if not sessions:
        await app.renderer.notice("there is no other saved session to resume", "info", "resume")
        return None
    app.activity.stop()  # no "esc to interrupt" spinner under the picker
    return await app.push_screen_wait(SessionPickerScreen(sessions, app.config.cwd))
