"""The interactive app: a transcript over a composer, driving one :class:`Session`
(built by :func:`agent_cli.runtime.open_session`).

What the user types goes to the session as an operation (``UserInput``; Shift+Tab, the rewind
picker and the palette send operations of their own) through ``commands.conversation``; each runs
in a worker that renders its events, and input sent while a turn runs is queued and sent when it
ends. The provider SDK is imported in a thread after the first paint so the screen shows up at once.

The app owns the session and the send path; its parts live beside it: the keys on the main
screen (``chat_screen.py``), what starts with each session (``background_work.py``), what the
composer completes (``completion_sources.py``), switching sessions (``session_switching.py``),
commands only a front end carries out (``command_actions.py``) and the turn's questions
(``questions.py``).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from functools import partial
from pathlib import Path
from typing import Any

from textual.app import App, ComposeResult, SystemCommand
from textual.binding import Binding
from textual.driver import Driver
from textual.drivers.linux_driver import LinuxDriver
from textual.screen import Screen

from agent_cli import events as ev
from agent_cli.commands.conversation import Conversation, Driven
from agent_cli.config import Config, with_model
from agent_cli.operations import Compact, Operation, RunCommand, ShellCommand
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.hook_events import end_reason
from agent_cli.status_line.payload import StatusFacts, session_json
from agent_cli.status_line.setting import find_status_line
from agent_cli.store.catalog import first_prompt
from agent_cli.terminal_text import terminal_safe, terminal_safe_event
from agent_cli.tui import rewinding
from agent_cli.tui.attention import Attention
from agent_cli.tui.background_work import BackgroundWork, idle_notification
from agent_cli.tui.chat_screen import ChatScreen
from agent_cli.tui.checks_status import checks_part
from agent_cli.tui.command_actions import carry_out
from agent_cli.tui.commands import CommandHost, CommandProvider, SharedCommands
from agent_cli.tui.completion_sources import CompletionSources
from agent_cli.tui.event_renderer import EventRenderer
from agent_cli.tui.exit_notes import exit_note
from agent_cli.tui.host_link import follow_host
from agent_cli.tui.hosted import Hosted
from agent_cli.tui.input_history import InputHistory
from agent_cli.tui.keys_help import keys_help
from agent_cli.tui.memory_editor import run_editor
from agent_cli.tui.pasted_images import PromptWithImages
from agent_cli.tui.prompt_queue import PromptQueue
from agent_cli.tui.questions import Questions
from agent_cli.tui.resuming import restored_session
from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.screens.model_picker import ModelPickerScreen
from agent_cli.tui.screens.network_question import NetworkQuestionScreen
from agent_cli.tui.screens.processes import ProcessesScreen
from agent_cli.tui.sent_input import QueuedOperation, operation_of
from agent_cli.tui.session_switching import show_conversation
from agent_cli.tui.terminal_driver import (
    HANGUP_EXIT_CODE,
    TerminalDriver,
    print_if_possible,
    quit_on_signals,
    stop_quitting_on_signals,
)
from agent_cli.tui.trust_prompt import ask_trust
from agent_cli.tui.widgets.activity_indicator import ActivityIndicator
from agent_cli.tui.widgets.attachment_chips import AttachmentChips
from agent_cli.tui.widgets.completion_menu import CompletionMenu
from agent_cli.tui.widgets.composer import Composer
from agent_cli.tui.widgets.mcp_indicator import McpIndicator
from agent_cli.tui.widgets.queued_messages import QueuedMessages
from agent_cli.tui.widgets.status_bar import StatusBar
from agent_cli.tui.widgets.status_line import StatusLine
from agent_cli.tui.widgets.transcript import Transcript

# Where slash commands come from: the one line to change for another command system.
COMMAND_PROVIDER: Callable[[CommandHost], CommandProvider] = SharedCommands
QUIT_WINDOW_SECONDS = 2.0
WAITING_LABEL = "waiting for the model"  # the activity line while a request gets no answer
STREAMED = (ev.TextDelta, ev.ReasoningDelta)  # what an interrupted turn still had in flight
# The command palette's entries that run a slash command: (title, help, operation).
PALETTE_COMMANDS: tuple[tuple[str, str, Operation], ...] = (
    ("New session", "Start a fresh conversation with the same settings", RunCommand("new")),
    ("Resume session", "Continue a saved conversation", RunCommand("resume")),
    ("Compact", "Summarize the conversation to free context", Compact()),
    ("Status", "Model, provider, policy and token usage", RunCommand("status")),
    ("Context", "What fills the context window", RunCommand("context")),
    ("Diff", "git diff of the working tree", RunCommand("diff")),
    ("Help", "Slash commands and keys", RunCommand("help")),
)


class AgentApp(App[int]):
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute, so subclasses elsewhere find it
    TITLE = "agent"
    # Keys that act over a dialog too; the others are the main screen's (chat_screen.py).
    BINDINGS = [
        Binding("ctrl+c", "ctrl_c", "quit", show=False, priority=True),
        Binding("ctrl+d", "ctrl_d", "quit", show=False, priority=True),
    ]

    def __init__(
        self,
        config: Config,
        prompt: str | None = None,
        *,
        session_factory: Callable[[Config], Session] | None = None,
        session: Session | None = None,  # a restored session (agent resume)
        remote: Hosted | None = None,  # a session in a host (agent --remote, agent attach)
    ):
        super().__init__()
        self.config = config
        self.initial_prompt = prompt
        self.session_factory = session_factory or interactive_session
        self.session_restorer: Callable[[Config, Path], Session] = restored_session
        self.remote = remote
        self.detached: str | None = None  # /detach moved the session to the host: how to get back to it
        self._session = None if remote is not None else session or self.session_factory(config)
        self.commands: CommandProvider = COMMAND_PROVIDER(self)
        self.history = InputHistory(config.agent_home / "history.jsonl")
        self.busy = False
        self._aborted = False
        self._last_ctrl_c = 0.0
        self.transcript = Transcript()
        self.renderer = EventRenderer(self.transcript)
        self.activity = ActivityIndicator()
        self.queued = QueuedMessages()
        self.mcp_indicator = McpIndicator()
        self.menu = CompletionMenu()
        self.sources = CompletionSources(self)
        self.composer = Composer(
            self.menu,
            self.history,
            self.commands.list_commands,
            self.sources.repo_files,
            self.sources.skills,
            id="composer",
        )
        self.composer.cwd = config.cwd
        self.attachments = AttachmentChips()
        self.queue = PromptQueue(self.queued, self.composer, self.attachments)
        self.composer.take_queued = self.queue.take_last
        self.status = StatusBar(self.conversation.model, self.conversation.provider, self.conversation.mode)
        self.status_facts = StatusFacts()  # what the status line command reads that the session does not keep
        command = find_status_line(config, self.session.trust.trusted)[0] if remote is None else None  # reads a Session
        self.status_line = StatusLine(command, partial(status_context, self))
        self.attention = Attention(config.raw.get("tui"), self._terminal_write, self.set_timer)  # title, notifications
        self.attention.on_idle = partial(idle_notification, self)
        self.background = BackgroundWork(self, self.mcp_indicator, self.sources)
        self.questions = Questions(self.push_screen, self.activity, self.attention, self.composer.insert)
        self.chat = ChatScreen(self)

    def get_default_screen(self) -> Screen:
        return self.chat

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
        quit_on_signals(self.exit)
        await show_conversation(self)
        self.composer.focus()
        self.status_line.request()
        if self.remote is not None:
            self.attention.start(self.remote.thread.name or self.remote.thread.preview or None)
            follow_host(self, self.remote)  # another client's turn, the one running now, the host leaving
        else:
            self.attention.start(first_prompt(self.session.rollout.path))  # a resumed session's name
            self.call_after_refresh(self.background.start)
            if ask_trust(self):  # a folder with code of its own, never asked about (tui/trust_prompt.py)
                return  # the first prompt waits for the answer
        if self.initial_prompt:
            self.send(self.initial_prompt)

    def get_driver_class(self) -> type[Driver]:
        default = super().get_driver_class()
        return TerminalDriver if default is LinuxDriver else default  # not when TEXTUAL_DRIVER names another

    def escape_read(self) -> bool:
        """Esc, as the terminal's input thread reads it (terminal_driver.py), before Textual
        queues the key: with a turn running on the main screen and no menu open, the answer
        stops showing now and the turn stops as soon as the event loop is free, not after the
        key has waited behind the answer's drawing. Off the event loop: it only sets flags."""
        loop = self._loop
        if loop is None or not self.busy or self.screen is not self.chat or self.menu.is_open:
            return False
        self.renderer.halt()
        loop.call_soon_threadsafe(self.interrupt)
        return True

    def terminal_lost(self) -> None:
        """The terminal hung up or stopped taking output (often with no SIGHUP: that went to a
        shell around the agent): quit as Ctrl+C twice does."""
        self.exit(HANGUP_EXIT_CODE)

    # --- the session ----------------------------------------------------------------------

    @property
    def session(self) -> Session:
        """The session in this process; none on a session in a host (``remote``), where nothing asks for it."""
        if self._session is None:
            raise RuntimeError("this app drives a session in a host: it has no session in this process")
        return self._session

    def next_config(self) -> Config:
        """The config a new or resumed session opens with: on the model ``/model`` chose, if it did."""
        return with_model(self.config, self.session.model)

    def switch_to(self, session: Session, config: Config | None = None) -> None:
        """Carry on with ``session`` (on ``config`` when that changed: another folder, another
        provider); the old one's connections and session file are closed."""
        self.run_worker(self.session.aclose(), group="close")
        if config is not None:
            if config.cwd != self.config.cwd:
                self.composer.cwd = config.cwd
                self.sources.forget_files()  # @path completion lists the new folder's files
            self.config = config
        self._session = session
        self.renderer = EventRenderer(self.transcript)
        self.status.count = None
        self.status.context_event = ""
        self.status.set_session(session.model, self.config.provider.id, session.mode)
        self.status.set_part("checks", checks_part(session), order=36, priority=55)  # the old one's are gone
        self.status_facts = StatusFacts()
        self.status_line.request()
        self.attention.new_session(first_prompt(session.rollout.path))
        self.background.start()

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

    @property
    def conversation(self) -> Driven:
        """The session as the app drives it: operations in, events out; in this process or in a host."""
        return self.remote if self.remote is not None else Conversation(self.session, self)

    def send(self, text: str | Operation) -> None:
        """Send what the user typed (or an operation of the app's own) now, queue it while a turn
        runs, or run a command that only reports beside the turn: Conversation.route decides, for
        every front end alike."""
        sent = text if isinstance(text, str) else QueuedOperation(text)
        op = operation_of(sent)
        plan = self.conversation.route(op, busy=self.busy)
        if plan.when == "refused":
            self.run_worker(partial(self.renderer.notice, plan.reason, "warning", plan.command), group="show")
        elif plan.when == "beside":
            command = partial(self.commands.run, self, op, beside_turn=True)
            self.run_worker(command, group="command", exit_on_error=False)
        elif plan.when == "queue":
            self.queue.add(sent)
        elif plan.command is not None:
            self.run_busy(partial(self.commands.run, self, op, beside_turn=False), "working")
        else:
            self.run_busy(partial(self._run_prompt, sent, op), "working")

    def send_queued_now(self) -> None:
        """Ctrl+S: stop the running turn and send what is queued right after it."""
        if self.busy and self.queue:
            self.queue.send_now = True
            self.interrupt()

    def interrupt(self) -> None:
        """Stop the running turn (Esc, Ctrl+C, Ctrl+S, the palette); the history stays valid.
        Nothing more of the answer shows from this moment: the screen does not wait for the
        stream to be cancelled, nor for what was already received to be drawn."""
        if self.busy:
            self.renderer.stop_streaming()
            self.activity.set_label("interrupting")
            self.conversation.interrupt()

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

    async def _run_prompt(self, text: str, op: Operation) -> None:
        await self.renderer.user_message(text, getattr(text, "images", ()))
        await self.render_events(self.conversation.submit(op))

    def run_busy(self, body: Callable[[], Awaitable[None]], label: str) -> None:
        """Run ``body`` as the app's work: what is typed meanwhile is queued."""
        self.busy = True
        self._aborted = False
        self.renderer.unmute()
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
            status, now = self.status, self.conversation
            status.set_session(now.model, now.provider, now.mode)  # /model, /mode
            self.status_line.request()  # a model or mode switch changes what it shows
            self.composer.remove_class("-queueing")
            while isinstance(self.screen, (ApprovalScreen, NetworkQuestionScreen)):  # the turn that asked is over
                self.pop_screen()
            self.queue.after_turn(self._aborted, self.send)

    # --- events -------------------------------------------------------------------------

    async def render_events(self, events: AsyncIterator[ev.Event]) -> None:
        async for event in events:
            await self.handle_event(event)

    async def handle_event(self, event: ev.Event) -> None:
        if self.renderer.muted and isinstance(event, STREAMED):
            return  # Esc was pressed: what is left of the stream is dropped unread
        # Made terminal-safe here, once on its way to the screen: the approval dialog shows the
        # command as the transcript does.
        event = terminal_safe_event(event)
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
                if (count := self.conversation.token_count()) is not None:
                    self.status.set_tokens(count)
            case ev.Diagnostics() | ev.ProjectCheck():
                self.status.set_part("checks", checks_part(self.session), order=36, priority=55)
            case ev.ApprovalRequest():
                self.questions.ask_approval(event, self.config.cwd)
            case ev.ElicitationRequest():
                self.questions.ask_form(event)
            case ev.BackgroundProcessList(processes=processes) if processes:
                self.push_screen(ProcessesScreen(self.session.background))
            case ev.TurnAborted():
                self._aborted = True
                # Said first where saying it costs one line's repaint: the notice below makes the
                # screen lay out again, which behind a long answer takes a while.
                await self.activity.say_now("interrupted")
            case ev.CommandAction():
                if await carry_out(self, event):
                    return
            case ev.Rewound(prompt=prompt) if prompt is not None:
                await rewinding.show_rewound(self, event)
        await self.renderer.render(event)
        if isinstance(event, ev.Notice) and event.title == "help":
            await self.renderer.notice(keys_help(), "info", "keys")

    # --- the terminal -------------------------------------------------------------------

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

    async def on_unmount(self) -> None:
        self.attention.stop()
        stop_quitting_on_signals()
        if self.remote is not None:
            await self.remote.aclose()  # the session goes on in the host
        elif self.detached is None:  # a detached session was closed here before it moved
            await self.session.aclose()  # while the loop still runs, so HTTP connections close cleanly

    # --- keys that act over a dialog too, and the palette ---------------------------------

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
            if self.remote is None:
                end_reason(self.session.hooks, "prompt_input_exit")  # SessionEnd's reason
            self.exit(0)
            return
        self._last_ctrl_c = now
        self.interrupt()
        self.status.show_hint(f"press {key} again to quit", QUIT_WINDOW_SECONDS)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        yield from super().get_system_commands(screen)
        if self.busy:
            yield SystemCommand("Interrupt", "Stop the running turn (esc)", self.interrupt)
        for title, help_text, command in PALETTE_COMMANDS:
            yield SystemCommand(title, help_text, partial(self.send, command))
        yield SystemCommand(
            "Toggle tool output", "Expand or collapse every tool cell", self.chat.action_toggle_tool_output
        )


def status_context(app: AgentApp) -> tuple[dict[str, Any], Path, dict[str, str] | None]:
    """What the status line command is run with: the session as JSON, where, its environment."""
    return session_json(app.session, app.status_facts), app.config.cwd, app.session.approvals.env


def interactive_session(config: Config) -> Session:
    return open_session(config, interactive=True)


def run_app(
    config: Config, prompt: str | None, session: Session | None = None, inline: bool = False, setup: str | None = None
) -> int:
    """Run the interactive app until the user quits; returns the exit code. ``inline``: below the
    shell prompt, leaving the last screen in the scrollback (no alternate screen). ``setup`` (a
    new worktree's set-up command) runs before ``prompt``."""
    app = AgentApp(config, QueuedOperation(ShellCommand(setup)) if setup else prompt, session=session)
    if setup and prompt:
        app.queue.append(prompt)  # sent when the set-up command is done
    return finish(app, app.run(inline=inline, inline_no_clear=inline))


def finish(app: AgentApp, result: int | None) -> int:
    """After the app: how to get back to the session (the terminal is back to normal, or gone), and the exit code."""
    if (note := exit_note(app.remote, app.detached, app._session)) is not None:
        print_if_possible(note)
    return result if isinstance(result, int) else app.return_code or 0
