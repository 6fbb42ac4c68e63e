"""The Session: one conversation with one model, shared by the TUI, `agent exec` and `agent acp`.

:func:`agent_cli.runtime.open_session` assembles a session (its tools, hooks, approvals, MCP
toolset, client factory...) and hands it the parts; a subagent's is assembled by ``open_child``.
Front ends send operations (``agent_cli/operations.py``) through
:class:`agent_cli.commands.conversation.Conversation`: the command layer applies them and drives
the session through two primitives.
:meth:`Session.run_in_task` runs one unit of the user's work (a prompt with its expansion, a
command, a compaction) in the session's own task and yields the events it emits, so
:meth:`Session.interrupt` can stop it at any await point and still leave a valid history.
:meth:`Session.turn` is one model turn, run inside that task (``turn.py``; each tool call goes
through ``tool_call.py``). The session never imports the command layer and calls nothing of it
but the body it is given to run.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from datetime import datetime
from operator import attrgetter
from typing import Any

from agent_cli import events as ev
from agent_cli import home_budget
from agent_cli.context.fragments import TURN_ABORTED
from agent_cli.context.initial import InitialContext
from agent_cli.context.modes import MODES
from agent_cli.context.tokens import TokenCounter
from agent_cli.items import Image, Item, user
from agent_cli.memory.book import MemoryBook
from agent_cli.models.base import ModelClient, ToolSpec, Usage
from agent_cli.session.clients import ModelClients
from agent_cli.session.compaction import compact as compact_history
from agent_cli.session.conversation_start import start_context
from agent_cli.session.hook_events import session_end
from agent_cli.session.meter import ContextMeter
from agent_cli.session.notify import after_turn
from agent_cli.session.parts import SessionParts
from agent_cli.session.request_parts import RequestParts, RequestShape
from agent_cli.session.resume_info import ResumeInfo
from agent_cli.session.services import SessionServices
from agent_cli.session.session_state import SessionState, fresh_initial_context
from agent_cli.session.state import Emit
from agent_cli.session.turn import run_turn
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.base import ToolContext

INTERRUPTED_NOTE = (
    "The user interrupted the previous turn. Tool calls still running were stopped, and any "
    "answer you were writing was not shown. Wait for the user's next message."
)


def new_session_id() -> str:
    return f"{datetime.now():%Y%m%dT%H%M%S}-{uuid.uuid4().hex[:8]}"


def _given(path: str) -> Any:
    """A part the session was given (``SessionParts``): read through, never replaced."""
    return property(attrgetter(path), doc=f"The session's {path.rsplit('.', 1)[-1]} (given by runtime).")


class Session:
    # What runtime assembled (session/parts.py): the parts the session works with...
    config = _given("_parts.config")  # the effective config: read only (model and mode are the session's)
    trust = _given("_parts.trust")  # until the folder is trusted, none of its own code runs (trust/)
    approvals = _given("_parts.approvals")  # policy, sandbox, permission rules, command env
    hooks = _given("_parts.hooks")
    plugins = _given("_parts.plugins")  # commands, skills, hooks, agents...
    agents = _given("_parts.agents")  # agent definitions, when the session has `task`
    subagent = _given("_parts.subagent")  # set when this session runs a subagent
    mcp = _given("_parts.mcp")  # None without MCP servers, and in a subagent (it uses the parent's)
    checks = _given("_parts.checks")  # diagnostics after edits, lint/test after a turn (lsp/)
    shell_snapshot = _given("_parts.shell_snapshot")  # taken at the first turn
    client_factory = _given("_parts.client_factory")  # a model's client (a subagent's are made the same way)
    output_schema = _given("_parts.output_schema")  # agent exec --output-schema: the answer is JSON that fits it
    editor_files = _given("_parts.editor_files")  # a front end's client holds the files (ACP)
    client_terminal = _given("_parts.client_terminal")  # (call_id, emit) -> a command runner (ACP)
    # ...and the ones it keeps its state in.
    rollout = _given("_parts.state.rollout")  # the session file (store/rollout.py)
    learned = _given("_parts.state.learned")
    counters = _given("_parts.state.counters")
    history = _given("_parts.state.history")  # items counted by the current model's counter
    tools = _given("_parts.tools")
    compaction = _given("_parts.state.compaction")
    window = _given("_parts.state.window")
    tool_use = _given("_parts.state.tool_use")
    background = _given("_parts.state.background")
    limits = _given("_parts.state.limits")
    checkpoints = _given("_parts.state.checkpoints")

    def __init__(self, parts: SessionParts):
        """A session of ``parts``, which :mod:`agent_cli.runtime` assembles (``open_session``,
        ``open_child``): the session owns its state and builds none of its collaborators. Its turns
        get its state and services (``self.state``, ``self.services``) beside a TurnContext."""
        self._parts = parts
        self.id = parts.session_id
        self.mode = parts.mode or parts.config.mode
        self.model = parts.model or parts.config.model  # a subagent may run another model than the config's
        self.resumed: ResumeInfo | None = None  # when restored from a session file (session/resume.py)
        self._turn_task: asyncio.Task[None] | None = None
        self._turns = 0
        self.tool_limit: frozenset[str] | None = (
            parts.tool_limit
        )  # fewer tools (the Claude SDK's --tools, /review's turn)
        config, kept = parts.config, parts.state
        self.state = SessionState(
            history=kept.history,
            meter=ContextMeter(config, kept.counters, kept.window, kept.compaction, kept.history, kept.learned),
            compaction=kept.compaction,
            hooks=parts.hooks,
            request=RequestShape(config, parts.tools, lambda: parts.approvals.interactive, parts.instructions),
        )
        self.services = SessionServices(
            tools=parts.tools,
            approvals=parts.approvals,
            clients=ModelClients(parts.client_factory, self.model, parts.client, parts.borrowed),
            rollout=kept.rollout,
            learned=kept.learned,
            checkpoints=kept.checkpoints,
            background=kept.background,
            tool_use=kept.tool_use,
            limits=kept.limits,
            memory=MemoryBook(config.agent_home, config.cwd, lambda: kept.rollout.path) if config.memory else None,
            mcp=parts.mcp,
            checks=parts.checks,
            shell_snapshot=parts.shell_snapshot,
            editor_files=parts.editor_files,
            client_terminal=parts.client_terminal,
        )
        home_budget.start(config.agent_home, config.home_budget_mb, kept.rollout.path)  # bounded disk

    @property
    def meter(self) -> ContextMeter:
        """Usage, token counts, the window and the auto-compaction threshold (session/meter.py)."""
        return self.state.meter

    @property
    def tokens(self) -> TokenCounter:
        """The current model's counter: an estimate; tiktoken near limits."""
        return self.state.meter.tokens

    @property
    def memory(self) -> MemoryBook | None:
        """The memory stores (``memory/book.py``, opened on first use); None when `memory = false`."""
        return self.services.memory

    @property
    def initial(self) -> InitialContext | None:
        """The initial context recorded at the start of the history (None before the first turn)."""
        return self.state.initial

    def start_mcp(self) -> None:
        """Start the MCP servers in the background now (front ends call it at start; needs a
        running event loop). Otherwise they start with the first turn."""
        if self.mcp is not None:
            self.mcp.start()

    # --- what front ends call ------------------------------------------------------------

    @property
    def running(self) -> bool:
        return self._turn_task is not None and not self._turn_task.done()

    @property
    def client(self) -> ModelClient:
        """The current model's client, made on first use (and again after a model switch)."""
        return self.services.clients.current()

    async def compact(self, instructions: str | None = None) -> AsyncIterator[ev.Event]:
        """Compact the conversation now (``/compact [focus]``); ``instructions`` focus the summary.

        Runs like a turn, so :meth:`interrupt` stops it and the old history is kept.
        """
        async for event in self.run_in_task(lambda emit: self.compact_now(emit, instructions)):
            yield event

    async def compact_now(self, emit: Emit, instructions: str | None = None) -> None:
        """A manual compaction inside the running task (``/compact`` runs here too)."""
        await compact_history(self.turn_context(), self.state, self.services, emit, "manual", instructions)

    async def aclose(self) -> None:
        """Release the session's resources: the model client's connections and the session file."""
        await session_end(self.turn_context(), self.state, self.services)  # SessionEnd hooks, once
        self.window.cancel()
        await self.background.aclose()  # every background process ends with the session (not keep_alive ones)
        await self.checkpoints.aclose()  # the last turn's "after" snapshot is recorded
        if self.mcp is not None:
            await self.mcp.aclose()  # every server process ends with the session
        if self.checks is not None and not self._is_borrowed(self.checks):
            await self.checks.aclose()  # and so does every language server
        await self.services.clients.aclose()  # not a client borrowed from a parent
        self.rollout.close()
        if self.shell_snapshot is not None and not self._is_borrowed(self.shell_snapshot):
            self.shell_snapshot.close()
        if self.memory is not None:
            self.memory.close()
        if self.approvals.network is not None and not self._parts.borrowed:
            self.approvals.network.close()  # the network proxy ends with the session that started it

    def _is_borrowed(self, resource: object) -> bool:
        """A child's borrowed shell snapshot and checks stay open when it closes: its parent closes them."""
        parts = self._parts
        return parts.borrowed and any(resource is part for part in (parts.shell_snapshot, parts.checks))

    async def wait_idle(self) -> None:
        """Until nothing runs in the session's task: an operation that waits its turn
        (commands/conversation.py) runs after the work before it."""
        while (task := self._turn_task) is not None and not task.done():
            await asyncio.wait([task])

    def steer(self, text: str, images: tuple[Image, ...] = ()) -> bool:
        """Add input to the running model turn (read before its next request); False when no
        model turn runs to take it."""
        return self.state.inbox.put(text, images)

    def interrupt(self) -> None:
        """Stop what :meth:`run_in_task` runs (expansion, a command, a turn, a compaction). History
        stays valid: open tool calls are closed as aborted, and the work ends with TurnAborted."""
        if self._turn_task is not None and not self._turn_task.done():
            self._turn_task.cancel()

    async def run_in_task(
        self, body: Callable[[Emit], Awaitable[None]], note_interrupt: bool = False
    ) -> AsyncIterator[ev.Event]:
        """Run ``body(emit)`` as the session's one running task and yield what it emits until it
        ends. One at a time (``running``); :meth:`interrupt` cancels it, and closing this iterator
        early cancels it too. Whatever ends it, the history stays valid and the session file is
        synced. With ``note_interrupt``, a turn the user stops after it added to the history
        leaves a note so the model knows its work was cut short."""
        if self.running:
            raise RuntimeError("a turn is already running")
        queue: asyncio.Queue[ev.Event | None] = asyncio.Queue()
        length_before = len(self.history)
        started = False

        async def runner() -> None:
            nonlocal started
            started = True
            try:
                await body(queue.put_nowait)
            except asyncio.CancelledError:
                closed = self.history.close_open_calls()
                if note_interrupt and len(self.history) > length_before:
                    self.record(user(TURN_ABORTED.wrap(INTERRUPTED_NOTE)))
                note = f" ({closed} running tool call(s) stopped)" if closed else ""
                queue.put_nowait(ev.TurnAborted(f"interrupted by the user{note}"))
            except Exception as exc:  # a bug must end the turn, not the program
                self.history.close_open_calls()
                queue.put_nowait(ev.Error(f"internal error: {type(exc).__name__}: {exc}", fatal=True))
                queue.put_nowait(ev.TurnFailed(str(exc)))
            finally:
                self.rollout.sync()  # the session file is made durable at the end of every turn
                if warning := self.rollout.take_warning():
                    queue.put_nowait(ev.Warning(warning))
                queue.put_nowait(None)

        def never_ran(task: asyncio.Task[None]) -> None:
            if not started:  # interrupted before its first step: its own ``finally`` never runs
                queue.put_nowait(ev.TurnAborted("interrupted by the user"))
                queue.put_nowait(None)

        # Its own task, not ``self._turn_task``: by the time this iterator is closed, an operation
        # that waited for this one may already run there, and must not be cancelled with it.
        task = self._turn_task = asyncio.create_task(runner())
        task.add_done_callback(never_ran)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            if not task.done():
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)

    # --- the turn ------------------------------------------------------------------------

    async def turn(
        self,
        text: str,
        emit: Emit,
        typed: str | None = None,
        images: tuple[Image, ...] = (),
        recall: str | None = None,
        only_tools: Iterable[str] | None = None,
    ) -> None:
        """One model turn for ``text`` (already expanded; ``typed`` is what the user typed; ``recall``
        the words memory recall searches with, when not those; ``only_tools``: at most these tools
        for this turn, within what the mode allows, as /review asks). Run it inside
        :meth:`run_in_task`, which makes it interruptible; the command layer decides when
        (commands/conversation.py)."""
        self._turns += 1
        emit(ev.TurnStarted(self._turns))
        previous = self.tool_limit
        if only_tools is not None:
            limit = frozenset(only_tools)
            self.tool_limit = limit if previous is None else previous & limit
        completed: list[ev.TurnComplete] = []

        def watch(event: ev.Event) -> None:
            if isinstance(event, ev.TurnComplete):
                completed.append(event)
            emit(event)

        self.state.inbox.open()
        try:
            await self.run_turn(text, watch, typed, images, recall)
        finally:
            self.tool_limit = previous
            self.checkpoints.turn_ended()
            if unread := self.state.inbox.close():  # the turn failed or was stopped before reading it
                emit(ev.Warning("not sent to the model (the turn ended first): " + " / ".join(t for t, _ in unread)))
        if completed:  # Codex's notify program hears of it
            answer = completed[-1].last_message
            after_turn(
                self.turn_context(), self.hooks, self.approvals.env, self.trust.trusted, typed or text, answer, emit
            )

    async def run_turn(
        self, text: str, emit: Emit, typed: str | None = None, images: tuple[Image, ...] = (), recall: str | None = None
    ) -> None:
        """The turn itself, without :meth:`turn`'s numbering and notify (a subagent's turn runs
        here): the context brought up to date, then turn.py's loop with a TurnContext resolved now."""
        turn = self.turn_context()
        start_context(turn, self.state, self.services, self._first_warnings(), emit)
        await run_turn(turn, self.state, self.services, text, emit, typed, images, recall)

    def turn_context(self) -> TurnContext:
        """The values a turn (or a compaction, a hook run) works with, as they are now."""
        return TurnContext(
            config=self.config,
            session_id=self.id,
            model=self.model,
            mode=self.mode,
            number=self._turns,
            tool_limit=self.tool_limit,
            sees_images=self.supports_images,
            plugin_skills=tuple(self.plugins.skills),
            output_schema=self.output_schema,
            agent_name=self.subagent.name if self.subagent is not None else None,
        )

    # --- the request -----------------------------------------------------------------------

    def request_parts(self) -> RequestParts:
        """What the next request sends besides the conversation: system prompt, tools, the door."""
        return self.state.request.parts(self.mode, self.tool_limit, self.window.tokens)

    @property
    def instructions(self) -> str:
        """The system prompt, built once so every request's prefix stays byte-identical."""
        return self.state.request.instructions(self.mode, self.lean)

    def use_instructions(self, text: str) -> None:
        """A front end's own system prompt for every request (the Claude Agent SDK's
        ``--system-prompt`` / ``--append-system-prompt``); the lean profile no longer applies."""
        self.state.request.use_instructions(text)

    @property
    def lean(self) -> bool:
        """The lean profile (context/profile.py): a small window, or `context_profile = "lean"`.
        Not in a subagent, which has its own prompt and few tools."""
        return self.state.request.lean(self.window.tokens)

    def tool_specs(self) -> list[ToolSpec]:
        """The tool list the next request sends (the door's tools last, when it has one)."""
        return list(self.request_parts().tools)

    def tool_context(self, call_id: str, emit: Emit) -> ToolContext:
        """What a tool run for a command (``!cmd``, /lint) may use, as a model's call would."""
        return self.services.tool_context(self.config, self.meter.tool_output_limit, call_id, emit)

    @property
    def supports_images(self) -> bool:
        """Whether the current model sees images (`model_supports_images` overrides the table)."""
        return self.counters.for_model(self.model).vision

    # --- the conversation's start ----------------------------------------------------------

    def build_initial_context(self) -> InitialContext:
        """A fresh initial context: AGENTS.md re-read, skills re-scanned, full environment."""
        permissions = self.approvals.permissions
        return fresh_initial_context(self.config, self.mode, permissions, self.window.tokens, self.plugins.skills)

    def mark_resumed(self, info: ResumeInfo) -> None:
        """The session continues the file ``info`` describes (session/resume.py filled it): its id."""
        self.id = info.session_id
        self.resumed = info

    def restart_context(self, initial: InitialContext) -> None:
        """``initial`` was sent in full (a resume): later turns' environment diffs start from it."""
        self.state.restart_context(initial)

    def take_load_warnings(self) -> list[str]:
        """Problems met reading the configuration, plugins and agent files, once: the TUI shows
        them as it starts, otherwise the first turn does."""
        told = self.state.told
        if "load warnings" in told:
            return []
        told.add("load warnings")
        agent_warnings = self.agents.warnings if self.agents is not None else ()
        trust = self.trust
        said = trust.answer is False or not self.approvals.interactive  # otherwise the TUI asks first
        skipped = [line] if said and (line := trust.skipped_line()) else []
        rules = self.approvals.permissions.warnings
        return [
            *self.config.warnings,
            *self.plugins.warnings,
            *agent_warnings,
            *self._parts.load_warnings,
            *rules,
            *skipped,
        ]

    def start_context(self, emit: Emit) -> None:
        """Before each user message: the initial context on the first turn, later only what
        changed in the environment (session/conversation_start.py)."""
        start_context(self.turn_context(), self.state, self.services, self._first_warnings(), emit)

    def _first_warnings(self) -> list[str]:
        """What the first turn shows with the initial context (nothing later)."""
        return self.take_load_warnings() if self.state.initial is None else []

    # --- model and mode ------------------------------------------------------------------

    def switch_model(self, model: str) -> None:
        """Use ``model`` from the next request on: ``/model``, and a command file's ``model:`` for its
        turn. Its client is created lazily; its window is what was learned about it, else looked up
        (and asked for) afresh. The config stays as loaded."""
        self.model = model
        self.services.clients.switch(model)
        self.meter.switch_model(model)
        self.tool_use.switch(model)

    def switch_mode(self, mode: str) -> None:
        """Use ``mode``'s tools and guidance from the next request on (``/mode``). The model hears of it
        through a note the command appends; the system prompt is rebuilt only at the next compaction."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode

    def rewind(self, index: int) -> str:
        """Take the conversation back to just before the prompt at ``index`` (/rewind); returns it."""
        prompt = self.checkpoints.rewind_conversation(index)
        self.meter.distrust_last_usage()
        compaction = self.compaction
        if compaction.history_len_after is not None and index < compaction.history_len_after:
            # Back into what the last compaction kept: its length is the history's now, so the
            # file's learned line stays true (a resume checks it against the history it loads).
            compaction.history_len_after = index
            self.learned.compaction_finished(compaction)
        return prompt

    def record(self, item: Item) -> None:
        self.state.record(item)

    # --- accounting, as front ends read it (session/meter.py) -----------------------------

    @property
    def total_usage(self) -> Usage:
        return self.meter.total_usage

    @property
    def last_usage(self) -> Usage | None:
        return self.meter.last_usage

    def count_usage(self, usage: Usage) -> None:
        """Tokens spent outside the context's own requests (a summary, a subagent's turn): in the totals only."""
        self.meter.count_usage(usage)

    @property
    def initial_tokens(self) -> int:
        return self.meter.initial_tokens(self.state.initial)

    @property
    def effective_window(self) -> int:
        return self.meter.effective_window

    def set_auto_compact(self, *, enabled: bool, percent: int | None = None, tokens: int | None = None) -> None:
        self.meter.set_auto_compact(enabled=enabled, percent=percent, tokens=tokens)

    @property
    def tool_output_limit(self) -> int:
        return self.meter.tool_output_limit

    @property
    def auto_compact_limit(self) -> int | None:
        return self.meter.auto_compact_limit

    def context_tokens(self) -> int:
        """Tokens the next request will carry."""
        return self.meter.context_tokens(self.request_parts())

    async def count_exactly(self) -> None:
        await self.meter.count_exactly()

    def token_count_event(self) -> ev.TokenCount:
        return self.meter.token_count_event(self.request_parts())
