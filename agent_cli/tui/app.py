"""The interactive app: a transcript over a composer, driving one :class:`Session`
(built by :func:`agent_cli.runtime.open_session`).

Each turn runs in a worker that iterates ``commands.dispatch.submit`` and renders its events; input sent
while a turn runs is queued and sent when it ends. The provider SDK is imported in a thread
after the first paint so the screen shows up at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import signal
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import ClassVar

from textual import events
from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding, BindingType
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.screen import ModalScreen, Screen
from textual.worker import Worker, get_current_worker

from agent_cli import events as ev
from agent_cli.commands.context_usage import token_count
from agent_cli.commands.dispatch import route, submit
from agent_cli.commands.ps_command import exit_notice
from agent_cli.commands.worktree_commands import config_in
from agent_cli.config import Config, with_model
from agent_cli.context.modes import MODES
from agent_cli.context.skills import load_skills, skill_roots
from agent_cli.display import home_relative
from agent_cli.mcp.prompts import resource_mentions
from agent_cli.models.registry import SDK_OF_WIRE
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.hook_events import cleared, end_reason, notification
from agent_cli.status_line.payload import StatusFacts, session_json
from agent_cli.status_line.setting import find_status_line
from agent_cli.store.catalog import SessionSummary, first_prompt
from agent_cli.store.replay import replay_events
from agent_cli.store.rollout import RolloutError
from agent_cli.terminal_text import terminal_safe, terminal_safe_event
from agent_cli.tui import draft_editor, first_run, resuming, rewinding
from agent_cli.tui.attention import Attention
from agent_cli.tui.checks_status import checks_part
from agent_cli.tui.commands import CommandHost, CommandProvider, SharedCommands
from agent_cli.tui.event_renderer import EventRenderer
from agent_cli.tui.input_history import InputHistory
from agent_cli.tui.keys_help import keys_help
from agent_cli.tui.memory_editor import run_editor
from agent_cli.tui.pasted_images import PromptWithImages
from agent_cli.tui.repo_files import list_files
from agent_cli.tui.resuming import restored_session
from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.screens.elicitation import ElicitationScreen, elicitation_answered
from agent_cli.tui.screens.model_picker import ModelPickerScreen
from agent_cli.tui.screens.processes import ProcessesScreen
from agent_cli.tui.screens.session_picker import SessionPickerScreen
from agent_cli.tui.terminal_driver import HANGUP_EXIT_CODE, TerminalDriver, print_if_possible
from agent_cli.tui.trust_prompt import ask_trust
from agent_cli.tui.welcome import welcome_notes
from agent_cli.tui.widgets.activity_indicator import ActivityIndicator
from agent_cli.tui.widgets.attachment_chips import AttachmentChips
from agent_cli.tui.widgets.completion_menu import CompletionMenu
from agent_cli.tui.widgets.composer import Composer
from agent_cli.tui.widgets.mcp_indicator import McpIndicator
from agent_cli.tui.widgets.queued_messages import QueuedMessages
from agent_cli.tui.widgets.status_bar import StatusBar
from agent_cli.tui.widgets.status_line import StatusLine
from agent_cli.tui.widgets.tool_cell import ToolCell
from agent_cli.tui.widgets.transcript import Transcript
from agent_cli.tui.widgets.welcome_banner import WelcomeBanner

# Where slash commands come from: the one line to change for another command system.
COMMAND_PROVIDER: Callable[[CommandHost], CommandProvider] = SharedCommands
FILES_REFRESH_SECONDS = 30.0
QUIT_WINDOW_SECONDS = 2.0
WAITING_LABEL = "waiting for the model"  # the activity line while a request gets no answer
# The command palette's entries that type a slash command: (title, help, command).
PALETTE_COMMANDS = (
    ("New session", "Start a fresh conversation with the same settings", "/new"),
    ("Resume session", "Continue a saved conversation", "/resume"),
    ("Compact", "Summarize the conversation to free context", "/compact"),
    ("Status", "Model, provider, policy and token usage", "/status"),
    ("Context", "What fills the context window", "/context"),
    ("Diff", "git diff of the working tree", "/diff"),
    ("Help", "Slash commands and keys", "/help"),
)


class AgentApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses elsewhere find it
    TITLE = "agent"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "interrupt", "interrupt", show=False),
        Binding("ctrl+c", "ctrl_c", "quit", show=False, priority=True),
        Binding("ctrl+d", "ctrl_d", "quit", show=False, priority=True),
        Binding("shift+tab", "cycle_mode", "mode", show=False, priority=True),
        Binding("ctrl+s", "send_queued_now", "send now", show=False),
        Binding("ctrl+g", "edit_draft", "edit in $EDITOR", show=False, priority=True),
        Binding("ctrl+o", "expand_latest", "expand the latest tool output", show=False, priority=True),
        # The composer keeps focus; these scroll the transcript above it.
        Binding("pageup", "scroll_transcript('page_up')", "scroll up", show=False, priority=True),
        Binding("pagedown", "scroll_transcript('page_down')", "scroll down", show=False, priority=True),
        Binding("ctrl+home", "scroll_transcript('home')", "top", show=False, priority=True),
        Binding("ctrl+end", "scroll_transcript('end')", "bottom", show=False, priority=True),
    ]

    def __init__(
        self,
        config: Config,
        prompt: str | None = None,
        *,
        session_factory: Callable[[Config], Session] | None = None,
        session: Session | None = None,  # a restored session (agent resume)
    ):
        super().__init__()
        self.config = config
        self.initial_prompt = prompt
        self.session_factory = session_factory or interactive_session
        self.session_restorer: Callable[[Config, Path], Session] = restored_session
        self.session = session if session is not None else self.session_factory(config)
        self.commands: CommandProvider = COMMAND_PROVIDER(self)
        self.history = InputHistory(config.agent_home / "history.jsonl")
        self.queue: list[str] = []
        self.busy = False
        self._aborted = False
        self._last_ctrl_c = 0.0
        self._escapes = rewinding.DoubleEscape()  # Esc Esc on an empty composer opens /rewind
        self._files: list[str] = []
        self._files_loaded_at = float("-inf")
        self._warned: set[str] = set()  # load warnings shown: a session that replaces one repeats them
        self._files_loading = False
        self._first_count: ev.TokenCount | None = None  # the status bar's count before the first turn
        self.transcript = Transcript()
        self.renderer = EventRenderer(self.transcript)
        self.activity = ActivityIndicator()
        self.queued = QueuedMessages()
        self.mcp_indicator = McpIndicator()
        self.menu = CompletionMenu()
        self.composer = Composer(
            self.menu, self.history, self.commands.list_commands, self._repo_files, self._skills, id="composer"
        )
        self.composer.cwd = config.cwd
        self.composer.take_queued = self._take_last_queued
        self._send_now = False  # Ctrl+S: the queue goes out as soon as the interrupted turn ends
        self.attachments = AttachmentChips()
        self.status = StatusBar(self.session.model, config.provider.id, self.session.mode)
        self.status_facts = StatusFacts()  # what the status line command reads that the session does not keep
        self.status_line = StatusLine(find_status_line(config, self.session.trust.trusted)[0], self._status_context)
        self.attention = Attention(config.raw.get("tui"), self._terminal_write, self.set_timer)  # title, notifications
        self.attention.on_idle = self._idle_notification

    def compose(self) -> ComposeResult:
        yield self.transcript
        yield self.transcript.below  # "new output below" while scrolled up
        yield self.activity
        yield self.mcp_indicator
        yield self.queued
        yield self.menu
        yield self.attachments
        yield self.composer
        yield self.status_line
        yield self.status

    async def on_mount(self) -> None:
        self._quit_on_signals()
        await self.transcript.add(self._banner())
        await self._replay_history()
        self.composer.focus()
        self.status_line.request()
        self.attention.start(first_prompt(self.session.rollout.path))  # a resumed session's name
        self.call_after_refresh(self._start_background_work)
        if ask_trust(self):  # a folder with code of its own, never asked about (tui/trust_prompt.py)
            return  # the first prompt waits for the answer
        if self.initial_prompt:
            self.send(self.initial_prompt)

    def _quit_on_signals(self) -> None:
        """SIGTERM and SIGHUP (the terminal closed) quit as Ctrl+C twice does, so the running
        command stops with the session: by default they ended the process at once and, outside
        a sandbox, left the command running."""
        loop = asyncio.get_running_loop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
                loop.add_signal_handler(signum, self.exit, 128 + signum)

    def get_driver_class(self) -> type[Driver]:
        default = super().get_driver_class()
        return TerminalDriver if default is LinuxDriver else default  # not when TEXTUAL_DRIVER names another

    def terminal_lost(self) -> None:
        """The terminal hung up or stopped taking output (often with no SIGHUP: that went to a
        shell around the agent): quit as Ctrl+C twice does."""
        self.exit(HANGUP_EXIT_CODE)

    def _status_context(self) -> tuple[dict, Path, dict[str, str] | None]:
        return session_json(self.session, self.status_facts), self.config.cwd, self.session.approvals.env

    def _banner(self) -> WelcomeBanner:
        notes = welcome_notes(self.config)  # what runs without asking; /init when there is no AGENTS.md
        return WelcomeBanner(self.session.model, self.config.provider.id, home_relative(self.config.cwd), notes)

    async def _replay_history(self) -> None:
        """A resumed session shows its conversation and what resuming found."""
        items = list(self.session.history.items)
        if not items and getattr(self.session, "resumed", None) is None:
            return

        for event in replay_events(items):
            await self.renderer.render(event)
        resumed = getattr(self.session, "resumed", None)
        for event in resumed.events() if resumed is not None else ():
            await self.renderer.render(event)
        self.status.set_tokens(self.session.token_count_event())

    # --- background work ----------------------------------------------------------------

    def _start_background_work(self) -> None:
        for warning in self.session.take_load_warnings():  # a broken plugin or agent file, before the first turn
            if warning not in self._warned:  # once per run: not again after the trust answer or /new
                self._warned.add(warning)
                self.run_worker(self.renderer.notice(warning, "warning"), group="show")
        self._start_mcp()
        self._watch_background()
        self.run_worker(self._warm_up, thread=True, group="warm-up", exit_on_error=False)

    def _watch_background(self) -> None:
        """Background processes: the status bar counts the running ones; an exit is shown at once."""
        session = self.session
        self.status.set_background(0)

        def changed(event: ev.Event) -> None:
            if session is not self.session:
                return
            self.status.set_background(session.background.running_count)
            if isinstance(event, ev.BackgroundProcessExited):
                self.run_worker(self.renderer.notice(exit_notice(event.process), "info", "background"), group="show")

        session.background.add_listener(changed)

    def _start_mcp(self) -> None:
        """MCP servers start in the background; the indicator follows them."""
        session = self.session
        if session.mcp is None:
            return
        manager = session.mcp.manager

        def changed() -> None:
            if session is self.session:
                self.mcp_indicator.show_states(manager.states())
                self._count_first_request()  # a ready server's tools join the first request

        manager.add_listener(changed)
        manager.allow_questions()  # elicitation forms: ElicitationScreen
        session.start_mcp()
        for note in session.mcp.take_start_notes():
            self.run_worker(self.renderer.notice(note, "warning", "mcp"), group="show")

    def _warm_up(self) -> None:
        """Import the model SDK and build the prompt off the UI thread, then show the context size."""
        session = self.session
        try:
            # The first request would wait for it (openai ~0.5 s, anthropic 1-2.5 s); the user is typing.
            importlib.import_module("httpx2")
            importlib.import_module(SDK_OF_WIRE.get(self.config.provider.wire_api, "openai"))
            session.tokens.preload()  # the tokenizer, while the user types (exec loads it near a limit)
            self.call_from_thread(session.count_exactly)  # switched on the event loop, between counts
            self.call_from_thread(self._count_first_request)
            if session.memory is not None:
                session.memory.warm()  # sqlite3 and the memory databases, before the first turn needs them
        except Exception:  # noqa: BLE001 - the first turn reports a broken setup properly
            return
        self._load_files()

    def _count_first_request(self) -> None:
        """Until the first turn starts, the status bar shows what its request will carry, as
        ``/context`` counts it (counted off the UI thread; a newer count replaces one in progress)."""
        if self.session.initial is None:
            self.run_worker(
                partial(self._first_request_tokens, self.session),
                thread=True,
                group="first-count",
                exclusive=True,
                exit_on_error=False,
            )

    def _first_request_tokens(self, session: Session) -> None:
        worker = get_current_worker()
        count = token_count(session)
        self.call_from_thread(self._initial_tokens, session, count, worker)

    def _initial_tokens(self, session: Session, count: ev.TokenCount, worker: Worker) -> None:
        shown = self.status.count
        if session is not self.session or session.initial is not None or worker.is_cancelled:
            return
        if shown is None or shown is self._first_count:  # never over a count the session reported
            self._first_count = count
            self.status.set_tokens(count)

    def _skills(self) -> list[tuple[str, str]]:
        """The skills `$name` completes: the session's, or found afresh before its first turn."""
        initial = self.session.initial
        if initial is not None:
            found = initial.skills
        else:
            found = load_skills(
                skill_roots(self.config.cwd, self.config.agent_home), self.session.plugins.skills
            ).skills
        return [(skill.name, skill.description) for skill in found]

    def _repo_files(self) -> list[str]:
        if time.monotonic() - self._files_loaded_at > FILES_REFRESH_SECONDS and not self._files_loading:
            self._files_loading = True
            self.run_worker(self._load_files, thread=True, group="files", exit_on_error=False)
        if self.session.mcp is not None:  # @server:uri completes MCP resources too
            return self._files + resource_mentions(self.session.mcp.manager)
        return self._files

    def _load_files(self) -> None:
        self._files_loading = True
        try:
            files = list_files(self.config.cwd)
        finally:
            self._files_loading = False
        self.call_from_thread(self._files_loaded, files)

    def _files_loaded(self, files: list[str]) -> None:
        self._files = files
        self._files_loaded_at = time.monotonic()
        if self.menu.kind == "file" or "@" in self.composer.text:
            self.composer.refresh_completion()

    # --- sending ------------------------------------------------------------------------

    async def on_composer_submitted(self, message: Composer.Submitted) -> None:
        self.transcript.follow()  # what is sent and its answer are in view, wherever the user had scrolled
        images = await self.attachments.take()
        self.send(PromptWithImages(message.text, images) if images else message.text)

    async def on_composer_images_pasted(self, message: Composer.ImagesPasted) -> None:
        await self.attachments.add(message.paths)

    async def on_composer_backspace_when_empty(self, message: Composer.BackspaceWhenEmpty) -> None:
        await self.attachments.remove_last()

    async def on_composer_help_asked(self, message: Composer.HelpAsked) -> None:
        await self.renderer.notice(keys_help(), "info", "keys")

    def send(self, text: str) -> None:
        """Send what the user typed now, queue it while a turn runs, or run a command that only
        reports beside the turn: commands.dispatch.route decides, for every front end alike."""
        plan = route(self.session, text, busy=self.busy, front_end=self)
        if plan.when == "refused":
            self.run_worker(partial(self.renderer.notice, plan.reason, "warning", plan.command), group="show")
        elif plan.when == "beside":
            command = partial(self.commands.run, self, text, beside_turn=True)
            self.run_worker(command, group="command", exit_on_error=False)
        elif plan.when == "queue":
            self.queue.append(text)
            self.queued.show_queue(self.queue)
        elif plan.command is not None:
            self._run_busy(partial(self.commands.run, self, text, beside_turn=False), "working")
        else:
            self._run_busy(partial(self._run_prompt, text, getattr(text, "images", ())), "working")

    # --- what commands may ask of the front end (commands/front_end.py) --------------------

    memory_shortcut = True  # `# text` saves a project memory, as in Claude Code

    async def edit_text(self, text: str, name: str) -> str | None:
        return await run_editor(self, text, name)

    async def pick_model(self, current: str, choices: dict[str, str]) -> str | None:
        choices = {name: source for name, source in choices.items() if terminal_safe(name) == name}
        # (a server's list: names that would print escapes are left out)
        self.activity.stop()  # no "esc to interrupt" spinner under the picker
        picked: asyncio.Future[str | None] = asyncio.get_running_loop().create_future()
        self.push_screen(
            ModelPickerScreen(list(choices), current, choices),
            callback=lambda result: None if picked.done() else picked.set_result(result),
        )
        return await picked

    async def _run_prompt(self, text: str, images: tuple[Path, ...] = ()) -> None:
        await self.renderer.user_message(text, images)
        await self.render_events(submit(self.session, str(text), images))

    def _run_busy(self, body: Callable[[], Awaitable[None]], label: str) -> None:
        self.busy = True
        self._aborted = False
        self.activity.start(label)
        self.composer.add_class("-queueing")
        self.run_worker(partial(self._busy_worker, body), group="turn", exit_on_error=False)

    async def _busy_worker(self, body: Callable[[], Awaitable[None]]) -> None:
        try:
            await body()
        except Exception as exc:  # noqa: BLE001 - a broken turn must not take the app down
            await self.renderer.end_streaming()
            await self.renderer.notice(f"{type(exc).__name__}: {exc}", "error")
        finally:
            self.busy = False
            self.activity.stop()
            self.status.set_session(self.session.model, self.config.provider.id, self.session.mode)  # /model, /mode
            self.status_line.request()  # a model or mode switch changes what it shows
            self.composer.remove_class("-queueing")
            self._close_approvals()
            self._after_turn()

    def _take_last_queued(self) -> str | None:
        if not self.queue:
            return None
        text = self.queue.pop()
        self.queued.show_queue(self.queue)
        return text

    def action_send_queued_now(self) -> None:
        """Ctrl+S: stop the running turn and send what is queued right after it."""
        if self.busy and self.queue:
            self._send_now = True
            self.action_interrupt()

    def _after_turn(self) -> None:
        send_now, self._send_now = self._send_now, False
        if not self.queue:
            return
        if self._aborted and not send_now:  # after an interrupt nothing is sent behind the user's back
            restored = "\n\n".join(self.queue)
            self.run_worker(self.attachments.add([p for text in self.queue for p in getattr(text, "images", ())]))
            current = self.composer.text
            self.composer.load_text(f"{restored}\n\n{current}" if current.strip() else restored)
            self.composer.move_cursor(self.composer.document.end)
            self.queue.clear()
        else:
            self.send(self.queue.pop(0))
        self.queued.show_queue(self.queue)

    # --- events -------------------------------------------------------------------------

    async def render_events(self, events: AsyncIterator[ev.Event]) -> None:
        async for event in events:
            await self.handle_event(event)

    async def handle_event(self, event: ev.Event) -> None:
        event = terminal_safe_event(event)  # the approval modal shows commands as they came
        if self.status_facts.observe(event):
            self.status_line.request()
        self.attention.observe(event)
        if self.activity.label.startswith(WAITING_LABEL) and not isinstance(event, ev.ModelWaiting):
            self.activity.set_label("working")  # the model answered
        match event:
            case ev.ModelWaiting(seconds=seconds):
                self.activity.set_label(f"{WAITING_LABEL}… {seconds:.0f} s")
            case ev.TokenCount():
                self.status.set_tokens(event)
            case ev.CompactionStarted():
                self.activity.set_label("compacting")
            case ev.CompactionFinished():
                self.status.compaction_finished(event)
                self.activity.set_label("working")
                self.status.set_tokens(self.session.token_count_event())
            case ev.Diagnostics() | ev.ProjectCheck():
                self.status.set_part("checks", checks_part(self.session), order=36, priority=55)
            case ev.ApprovalRequest():
                self._ask_approval(event)
            case ev.ElicitationRequest():
                self.push_screen(ElicitationScreen(event), callback=elicitation_answered(event))
            case ev.BackgroundProcessList(processes=processes) if processes:
                self.push_screen(ProcessesScreen(self.session.background))
            case ev.TurnAborted():
                self._aborted = True
            case ev.CommandAction(action="quit"):
                end_reason(self.session.hooks, "prompt_input_exit")  # SessionEnd's reason
                self.exit(0)
            case ev.CommandAction(action="copy", argument=text):
                self.copy_to_clipboard(text or "")
                lines = (text or "").count("\n") + 1
                await self.renderer.notice(
                    f"copied the last answer ({lines} lines, {len(text or '')} characters)", "info", "copy"
                )
                return
            case ev.CommandAction(action="export", argument=text):
                self.copy_to_clipboard(text or "")
                await self.renderer.notice(
                    f"copied the conversation as Markdown ({(text or '').count(chr(10))} lines)", "info", "export"
                )
                return
            case ev.CommandAction(action="new"):
                self.new_session()
            case ev.CommandAction(action="resume", argument=argument):
                await self.resume_session(argument)
                return
            case ev.CommandAction(action="login"):
                await first_run.log_in(self)  # the set-up screen, then a session on its choice
                return
            case ev.CommandAction(action="rewind"):
                await rewinding.pick_and_rewind(self)  # the picker instead of the text list
                return
            case ev.CommandAction(action="worktree", argument=folder, then=then) if folder:
                await self.go_to_folder(Path(folder), then)
                return
            case ev.Rewound(prompt=prompt) if prompt is not None:
                await rewinding.show_rewound(self, event)
        await self.renderer.render(event)
        if isinstance(event, ev.Notice) and event.title == "help":
            await self.renderer.notice(keys_help(), "info", "keys")

    def _ask_approval(self, request: ev.ApprovalRequest) -> None:
        def answer(decision: ev.ApprovalDecision | None) -> None:
            self.attention.answered()
            if self.activity.label == "waiting for approval":
                self.activity.set_label("working")  # the wait ends with the answer
            if request.future is not None and not request.future.done():
                request.future.set_result(decision or ev.ApprovalDecision("deny"))

        self.activity.set_label("waiting for approval")
        self.push_screen(
            ApprovalScreen(request, typed_early=self.composer.insert, cwd=self.config.cwd), callback=answer
        )

    def _close_approvals(self) -> None:
        while isinstance(self.screen, ApprovalScreen):
            self.pop_screen()

    # --- session lifecycle --------------------------------------------------------------

    def next_config(self) -> Config:
        """The config a new or resumed session opens with: on the model ``/model`` chose, if it did."""
        return with_model(self.config, self.session.model)

    def new_session(self, config: Config | None = None, note: str = "new session started") -> None:
        """``/new`` (``/clear``), or a session on another config (``/login``'s choice)."""
        session = self.session_factory(config or self.next_config())
        cleared(self.session.hooks, session.hooks)  # SessionEnd and the next SessionStart say "clear"
        self._switch_to(session)
        self.run_worker(self._fresh_transcript(note), group="show")

    def _switch_to(self, session: Session) -> None:
        """Carry on with ``session``; the old one's connections and session file are closed."""
        self.run_worker(self.session.aclose(), group="close")
        self.session = session
        self.renderer = EventRenderer(self.transcript)
        self.status.count = None
        self.status.context_event = ""
        self.status.set_session(self.session.model, self.config.provider.id, self.session.mode)
        self.status.set_part("checks", checks_part(session), order=36, priority=55)  # the old one's are gone
        self.status_facts = StatusFacts()
        self.status_line.request()
        self.attention.new_session(first_prompt(session.rollout.path))
        self._start_background_work()

    async def resume_session(self, ref: str | None) -> None:
        """``/resume [id]``: continue a saved session (picked from a list without an id) instead of this one.

        Runs inside the command's busy worker, so nothing is sent while the user picks.
        """
        home, current = self.config.agent_home, self.session.rollout.path
        try:
            if ref is not None:
                path = await asyncio.to_thread(resuming.find_saved, home, ref, current)
            else:
                path = await self._pick_session(await asyncio.to_thread(resuming.saved_sessions, home, current))
                if path is None:
                    return
            self.activity.start("resuming")
            session = await asyncio.to_thread(self.session_restorer, self.next_config(), path)
        except (RolloutError, OSError) as exc:
            await self.renderer.notice(resuming.failure_text(exc), "error", "resume")
            return
        if session.config.cwd != self.config.cwd:  # it ran in a worktree: the app goes there with it
            self.config = config_in(self.config, session.config.cwd)
            self.composer.cwd = session.config.cwd
        self._switch_to(session)
        await self.transcript.clear()
        await self.transcript.add(self._banner())
        await self._replay_history()
        if note := resuming.model_note(session, path, self.config):
            await self.renderer.notice(note, "info", "model")

    async def go_to_folder(self, folder: Path, first_input: str | None = None) -> None:
        """``/worktree NAME``: a new session in ``folder`` with this one's settings; ``first_input``
        (a new worktree's set-up `!command`) is sent there first."""
        self.config = config_in(self.next_config(), folder)
        self.composer.cwd = folder
        self._files_loaded_at = float("-inf")  # @path completion lists the new folder's files
        self._switch_to(self.session_factory(self.config))
        await self._fresh_transcript()
        if first_input:
            self.queue.insert(0, first_input)
            self.queued.show_queue(self.queue)

    async def _pick_session(self, sessions: list[SessionSummary]) -> Path | None:
        if not sessions:
            await self.renderer.notice("there is no other saved session to resume", "info", "resume")
            return None

        self.activity.stop()  # no "esc to interrupt" spinner under the picker
        return await self.push_screen(SessionPickerScreen(sessions, self.config.cwd), wait_for_dismiss=True)

    async def _fresh_transcript(self, note: str = "new session started") -> None:
        await self.transcript.clear()
        await self.transcript.add(self._banner())
        await self.renderer.notice(note, "info")

    def on_app_focus(self) -> None:
        self.attention.focused = True  # the terminal reports focus (Textual turns reporting on)

    def on_app_blur(self) -> None:
        self.attention.focused = False

    def on_text_area_changed(self) -> None:
        self.attention.touched()  # typing: the prompt is not idle

    def _terminal_write(self, text: str) -> None:
        """Title and notification sequences, straight to the terminal (none in a headless run)."""
        if self._driver is not None and not self.is_headless:
            self._driver.write(text)

    def _idle_notification(self) -> None:
        """Notification hooks: the prompt has been idle for 60 s after a turn."""

        def show(event: ev.Event) -> None:
            self.run_worker(self.renderer.render(event), group="show")

        self.run_worker(
            notification(
                self.session.turn_context(),
                self.session.state,
                self.session.services,
                "idle_prompt",
                "agent is waiting for your input",
                show,
            ),
            group="hooks",
            exit_on_error=False,
        )

    async def on_unmount(self) -> None:
        self.attention.stop()
        for signum in (signal.SIGTERM, signal.SIGHUP):
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                asyncio.get_running_loop().remove_signal_handler(signum)
        await self.session.aclose()  # while the loop still runs, so HTTP connections close cleanly

    # --- keys and palette ---------------------------------------------------------------

    def action_interrupt(self) -> None:
        if self.busy:
            self.activity.set_label("interrupting")
            self.session.interrupt()
        elif not self.composer.text and self._escapes.pressed():
            self.send("/rewind")

    def action_ctrl_c(self) -> None:
        """Clear the draft, or interrupt the turn; two presses in a row with nothing to clear quit.

        A press that clears a draft never counts towards quitting, so clearing a new draft right
        after an earlier press cannot quit. With text selected (the mouse in the transcript, or
        in the composer) it copies the selection instead, as terminals do."""
        selected = self.screen.get_selected_text() or self.composer.selected_text
        if selected:
            self.copy_to_clipboard(selected)
            self.screen.clear_selection()
            self.status.show_hint(f"copied {len(selected)} characters", QUIT_WINDOW_SECONDS)
            self._last_ctrl_c = 0.0
            return
        if self.composer.text:
            self.composer.clear()
            self._last_ctrl_c = 0.0
            return
        self._quit_press("ctrl+c")

    def action_ctrl_d(self) -> None:
        """Ctrl+D on an empty composer quits the same way (twice); otherwise it deletes as usual."""
        if self.focused is self.composer and self.composer.text:
            self.composer.action_delete_right()
            return
        self._quit_press("ctrl+d")

    def _quit_press(self, key: str) -> None:
        now = time.monotonic()
        if now - self._last_ctrl_c < QUIT_WINDOW_SECONDS:
            end_reason(self.session.hooks, "prompt_input_exit")  # SessionEnd's reason
            self.exit(0)
            return
        self._last_ctrl_c = now
        if self.busy:
            self.action_interrupt()
        self.status.show_hint(f"press {key} again to quit", QUIT_WINDOW_SECONDS)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("cycle_mode", "scroll_transcript") and isinstance(self.screen, ModalScreen):
            return False  # in a dialog these keys do what they do there
        return True

    def action_scroll_transcript(self, where: str) -> None:
        transcript = self.transcript
        if where == "page_up":
            transcript.scroll_page_up(animate=False)
        elif where == "page_down":
            transcript.scroll_page_down(animate=False)
        elif where == "home":
            transcript.scroll_home(animate=False)
        else:
            transcript.scroll_end(animate=False)  # back to following the newest output

    def action_cycle_mode(self) -> None:
        """Shift+Tab: agent → ask → plan → agent, through ``/mode`` like a typed switch."""
        self.send(f"/mode {MODES[(MODES.index(self.session.mode) + 1) % len(MODES)]}")

    def on_key(self, event: events.Key) -> None:
        """A letter typed while a transcript cell has focus goes to the composer, never nowhere."""
        if self.focused is self.composer or isinstance(self.screen, ModalScreen):
            return
        if event.is_printable and event.character:
            event.stop()
            self.composer.focus()
            self.composer.insert(event.character)

    def action_edit_draft(self) -> None:
        """Ctrl+G: the draft in $VISUAL/$EDITOR (tui/draft_editor.py)."""
        if not isinstance(self.screen, ModalScreen):
            self.run_worker(draft_editor.edit_draft(self), group="editor", exclusive=True, exit_on_error=False)

    def action_expand_latest(self) -> None:
        """Ctrl+O (Claude Code's key): expand or collapse the newest tool cell's output."""
        if cells := list(self.transcript.query(ToolCell)):
            cells[-1].expanded = not cells[-1].expanded
            if cells[-1].expanded:
                cells[-1].scroll_visible(animate=False)

    def action_focus_next(self) -> None:
        """Tab from the composer goes to the newest tool cell, then to older ones, then back."""
        cells = list(self.transcript.query(ToolCell)) if not isinstance(self.screen, ModalScreen) else []
        if self.focused is self.composer and cells:
            cells[-1].focus()
        elif cells and self.focused in cells:
            at = cells.index(self.focused)
            (cells[at - 1] if at > 0 else self.composer).focus()
        else:
            super().action_focus_next()

    def action_toggle_tool_output(self) -> None:
        cells = list(self.transcript.query(ToolCell))
        expand = not any(cell.expanded for cell in cells)
        for cell in cells:
            cell.expanded = expand

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.busy:
            yield SystemCommand("Interrupt", "Stop the running turn (esc)", self.action_interrupt)
        for title, help_text, command in PALETTE_COMMANDS:
            yield SystemCommand(title, help_text, partial(self.send, command))
        yield SystemCommand("Toggle tool output", "Expand or collapse every tool cell", self.action_toggle_tool_output)


def interactive_session(config: Config) -> Session:
    return open_session(config, interactive=True)


def run_app(
    config: Config,
    prompt: str | None,
    session: Session | None = None,
    inline: bool = False,
    first_input: str | None = None,
) -> int:
    """Run the interactive app until the user quits; returns the exit code. ``inline``: below the
    shell prompt, leaving the last screen in the scrollback (no alternate screen). ``first_input``
    goes before ``prompt`` (a new worktree's set-up `!command`)."""
    app = AgentApp(config, first_input or prompt, session=session)
    if first_input and prompt:
        app.queue.append(prompt)  # sent when the set-up command is done
    result = app.run(inline=inline, inline_no_clear=inline)
    if (note := resume_note(app.session)) is not None:
        print_if_possible(note)  # the terminal is back to normal (or gone): the way back into this conversation
    if isinstance(result, int):
        return result
    return app.return_code or 0


def resume_note(session: Session) -> str | None:
    """What to print on exit: the session id and how to continue it; None when nothing was saved."""
    rollout = session.rollout
    if not rollout.path.exists():
        return None
    session_id = rollout.header.id
    return f"session {session_id}\ncontinue it with: agent resume {session_id}   (headless: agent exec resume {session_id} PROMPT)"
