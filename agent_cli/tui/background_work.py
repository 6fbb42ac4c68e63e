"""What starts with each session beside the conversation, after the first paint: its load
warnings, MCP servers (the indicator follows them), background processes (the status bar counts
them), the model SDK's import and the tokenizer (in a thread), and the first request's size, which
the status bar shows until the first turn reports its own count. And the Notification hooks of a
prompt left idle."""

from __future__ import annotations

import importlib
from functools import partial

from textual.worker import Worker, get_current_worker

from agent_cli import events as ev
from agent_cli.commands.context_usage import token_count
from agent_cli.commands.ps_command import exit_notice
from agent_cli.models.registry import SDK_OF_WIRE
from agent_cli.session import Session
from agent_cli.session.hook_events import notification
from agent_cli.tui.app_host import AppHost
from agent_cli.tui.completion_sources import CompletionSources
from agent_cli.tui.widgets.mcp_indicator import McpIndicator


class BackgroundWork:
    def __init__(self, app: AppHost, mcp_indicator: McpIndicator, sources: CompletionSources) -> None:
        self.app = app
        self.mcp_indicator = mcp_indicator
        self.sources = sources
        self._warned: set[str] = set()  # load warnings shown: a session that replaces one repeats them
        self._first_count: ev.TokenCount | None = None  # the status bar's count before the first turn

    def start(self) -> None:
        """For the app's session, new or replaced (``/new``, ``/resume``, the trust answer)."""
        app = self.app
        for warning in app.session.take_load_warnings():  # a broken plugin or agent file, before the first turn
            if warning not in self._warned:  # once per run: not again after the trust answer or /new
                self._warned.add(warning)
                app.run_worker(app.renderer.notice(warning, "warning"), group="show")
        self._start_mcp()
        self._watch_background()
        app.run_worker(self._warm_up, thread=True, group="warm-up", exit_on_error=False)

    def _watch_background(self) -> None:
        """Background processes: the status bar counts the running ones; an exit is shown at once."""
        app, session = self.app, self.app.session
        app.status.set_background(0)

        def changed(event: ev.Event) -> None:
            if session is not app.session:
                return
            app.status.set_background(session.background.running_count)
            if isinstance(event, ev.BackgroundProcessExited):
                app.run_worker(app.renderer.notice(exit_notice(event.process), "info", "background"), group="show")

        session.background.add_listener(changed)

    def _start_mcp(self) -> None:
        """MCP servers start in the background; the indicator follows them."""
        app, session = self.app, self.app.session
        if session.mcp is None:
            return
        manager = session.mcp.manager

        def changed() -> None:
            if session is app.session:
                self.mcp_indicator.show_states(manager.states())
                self.count_first_request()  # a ready server's tools join the first request

        manager.add_listener(changed)
        manager.allow_questions()  # elicitation forms: ElicitationScreen
        session.start_mcp()
        for note in session.mcp.take_start_notes():
            app.run_worker(app.renderer.notice(note, "warning", "mcp"), group="show")

    def _warm_up(self) -> None:
        """Import the model SDK and build the prompt off the UI thread, then show the context size."""
        app, session = self.app, self.app.session
        try:
            # The first request would wait for it (openai ~0.5 s, anthropic 1-2.5 s); the user is typing.
            importlib.import_module("httpx2")
            importlib.import_module(SDK_OF_WIRE.get(app.config.provider.wire_api, "openai"))
            session.tokens.preload()  # the tokenizer, while the user types (exec loads it near a limit)
            app.call_from_thread(session.count_exactly)  # switched on the event loop, between counts
            app.call_from_thread(self.count_first_request)
            if session.memory is not None:
                session.memory.warm()  # sqlite3 and the memory databases, before the first turn needs them
        except Exception:  # noqa: BLE001 - the first turn reports a broken setup properly
            return
        self.sources.load_files()

    def count_first_request(self) -> None:
        """Until the first turn starts, the status bar shows what its request will carry, as
        ``/context`` counts it (counted off the UI thread; a newer count replaces one in progress)."""
        if self.app.session.initial is None:
            self.app.run_worker(
                partial(self._first_request_tokens, self.app.session),
                thread=True,
                group="first-count",
                exclusive=True,
                exit_on_error=False,
            )

    def _first_request_tokens(self, session: Session) -> None:
        worker = get_current_worker()
        count = token_count(session)
        self.app.call_from_thread(self._show_first_count, session, count, worker)

    def _show_first_count(self, session: Session, count: ev.TokenCount, worker: Worker) -> None:
        status = self.app.status
        if session is not self.app.session or session.initial is not None or worker.is_cancelled:
            return
        if status.count is None or status.count is self._first_count:  # never over a count the session reported
            self._first_count = count
            status.set_tokens(count)


def idle_notification(app: AppHost) -> None:
    """Notification hooks: the prompt has been idle for 60 s after a turn."""

    def show(event: ev.Event) -> None:
        app.run_worker(app.handle_event(event), group="show")

    session = app.session
    app.run_worker(
        notification(
            session.turn_context(),
            session.state,
            session.services,
            "idle_prompt",
            "agent is waiting for your input",
            show,
        ),
        group="hooks",
        exit_on_error=False,
    )
