"""The Session: one conversation with one model, shared by the TUI, `agent exec` and `agent acp`.

:func:`agent_cli.runtime.open_session` assembles a session (its tools, hooks, approvals, MCP
toolset, client factory...) and hands it the parts; a subagent's is assembled by ``open_child``.
Front ends hand what the user typed to :func:`agent_cli.commands.dispatch.submit`: the command
layer is the one router of typed input, and it drives the session through two primitives.
:meth:`Session.run_in_task` runs one unit of the user's work (a prompt with its expansion, a
command, a compaction) in the session's own task and yields the events it emits, so
:meth:`Session.interrupt` can stop it at any await point and still leave a valid history.
:meth:`Session.turn` is one model turn, run inside that task (``turn.py``; each tool call goes
through ``tool_call.py``). The session never imports the command layer and calls nothing of it
but the body it is given to run.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from dataclasses import replace
from datetime import datetime
from operator import attrgetter
from typing import Any

from agent_cli import events as ev
from agent_cli import home_budget
from agent_cli.context.environment import EnvironmentContext
from agent_cli.context.environment import diff as environment_diff
from agent_cli.context.fragments import TURN_ABORTED
from agent_cli.context.image_items import no_vision_warning, without_images
from agent_cli.context.initial import InitialContext, build_instructions
from agent_cli.context.initial import build_initial_context as fresh_initial_context
from agent_cli.context.modes import MODES, tools_for_mode
from agent_cli.context.profile import TOOL_CALL, TOOL_SEARCH, behind_search, is_lean, lean_spec, offered_directly
from agent_cli.context.prompts import prompt_library
from agent_cli.context.skills import skill_injections
from agent_cli.context.tokens import TokenCounter, auto_compact_limit, effective_window, tool_output_limit
from agent_cli.items import Image, Item, user
from agent_cli.memory.book import MemoryBook
from agent_cli.models.base import ModelClient, ToolSpec, Usage
from agent_cli.sandbox.guard import home_notice, start_watching
from agent_cli.sandbox.policy import start_warning
from agent_cli.session.compaction import compact as compact_history
from agent_cli.session.compaction_state import AutoCompactSetting
from agent_cli.session.hook_events import session_end
from agent_cli.session.learned import Learned
from agent_cli.session.notify import after_turn
from agent_cli.session.parts import SessionParts
from agent_cli.session.resume_info import ResumeInfo
from agent_cli.session.state import Emit
from agent_cli.session.turn import run_turn
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.base import Tool, ToolContext
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.tool_search import ToolCallTool, ToolSearchTool
from agent_cli.tools.web_fetch import WebSettings

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
    compaction = _given("_parts.state.compaction")
    window = _given("_parts.state.window")
    tool_use = _given("_parts.state.tool_use")
    background = _given("_parts.state.background")
    limits = _given("_parts.state.limits")
    checkpoints = _given("_parts.state.checkpoints")

    def __init__(self, parts: SessionParts):
        """A session of ``parts``, which :mod:`agent_cli.runtime` assembles (``open_session``,
        ``open_child``): the session owns its state and builds none of its collaborators."""
        self._parts = parts
        self.id = parts.session_id
        self.mode = parts.mode or parts.config.mode
        self.model = parts.model or parts.config.model  # a subagent may run another model than the config's
        self._told: set[str] = set()  # "no vision", "load warnings": what the user hears once
        self.total_usage = Usage()
        self.last_usage: Usage | None = None
        self._usage_mark: int | None = 0  # len(history) at the last usage report; None after a compaction
        self._client = parts.client
        self._retired_clients: list[ModelClient] = []  # replaced by switch_model(); closed with the session
        self._memory: MemoryBook | None = None  # opened on first use (memory/book.py)
        self._instructions: str | None = parts.instructions  # a subagent's own system prompt, or built once
        self._own_instructions: str | None = None  # a front end's whole system prompt (use_instructions)
        self._instructions_lean = False  # the profile the cached system prompt was built for
        self.initial: InitialContext | None = None  # recorded at the start of the history
        self._initial_tokens: tuple[object, int] | None = None  # (initial, its token count)
        self.environment: EnvironmentContext | None = None  # as last sent to the model
        self.resumed: ResumeInfo | None = None  # when restored from a session file (session/resume.py)
        self._turn_task: asyncio.Task[None] | None = None
        self._turns = 0
        self.tool_limit: frozenset[str] | None = (
            parts.tool_limit
        )  # fewer tools (the Claude SDK's --tools, /review's turn)
        home_budget.start(parts.config.agent_home, parts.config.home_budget_mb, self.rollout.path)  # bounded disk

    @property
    def tokens(self) -> TokenCounter:
        """The current model's counter: an estimate; tiktoken near limits."""
        return self.counters.current

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
        if self._client is None:
            self._client = self.client_factory(self.model)
        return self._client

    async def compact(self, instructions: str | None = None) -> AsyncIterator[ev.Event]:
        """Compact the conversation now (``/compact [focus]``); ``instructions`` focus the summary.

        Runs like a turn, so :meth:`interrupt` stops it and the old history is kept.
        """
        async for event in self.run_in_task(lambda emit: self.compact_now(emit, instructions)):
            yield event

    async def compact_now(self, emit: Emit, instructions: str | None = None) -> None:
        """A manual compaction inside the running task (``/compact`` runs here too)."""
        await compact_history(self.turn_context(), emit, "manual", instructions)

    async def aclose(self) -> None:
        """Release the session's resources: the model client's connections and the session file."""
        await session_end(self.turn_context())  # SessionEnd hooks, once (the front end set the reason)
        self.window.cancel()
        await self.background.aclose()  # every background process ends with the session (not keep_alive ones)
        await self.checkpoints.aclose()  # the last turn's "after" snapshot is recorded
        if self.mcp is not None:
            await self.mcp.aclose()  # every server process ends with the session
        if self.checks is not None and not self._is_borrowed(self.checks):
            await self.checks.aclose()  # and so does every language server
        clients, self._client, self._retired_clients = [*self._retired_clients, self._client], None, []
        for client in clients:
            if client is not None and not self._is_borrowed(client):
                with contextlib.suppress(Exception):  # closing is best effort
                    await client.aclose()
        self.rollout.close()
        if self.shell_snapshot is not None and not self._is_borrowed(self.shell_snapshot):
            self.shell_snapshot.close()
        if self._memory is not None:
            self._memory.close()

    def _is_borrowed(self, resource: object) -> bool:
        """A child's borrowed client, shell snapshot and checks stay open when it closes: its parent closes them."""
        parts = self._parts
        return parts.borrowed and any(resource is part for part in (parts.client, parts.shell_snapshot, parts.checks))

    def interrupt(self) -> None:
        """Stop what :meth:`run_in_task` runs (expansion, a command, a turn, a compaction). History
        stays valid: open tool calls are closed as aborted, and the work ends with TurnAborted."""
        if self.running:
            self._turn_task.cancel()  # type: ignore[union-attr]

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

        self._turn_task = asyncio.create_task(runner())
        self._turn_task.add_done_callback(never_ran)
        try:
            while (event := await queue.get()) is not None:
                yield event
        finally:
            if not self._turn_task.done():
                self._turn_task.cancel()
                await asyncio.gather(self._turn_task, return_exceptions=True)

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
        (commands/dispatch.py)."""
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

        try:
            await run_turn(self.turn_context(), text, watch, typed, images, recall)
        finally:
            self.tool_limit = previous
            self.checkpoints.turn_ended()
        if completed:  # Codex's notify program hears of it
            after_turn(self.turn_context(), self.trust.trusted, typed or text, completed[-1].last_message, emit)

    def turn_context(self) -> TurnContext:
        """The parts a turn (or a compaction, a hook run) works with, as they are now."""
        return TurnContext(
            state=self,
            config=self.config,
            session_id=self.id,
            model=self.model,
            mode=self.mode,
            number=self._turns,
            history=self.history,
            tokens=self.tokens,
            tools=self._parts.tools,
            approvals=self.approvals,
            hooks=self.hooks,
            window=self.window,
            compaction=self.compaction,
            learned=self.learned,
            rollout=self.rollout,
            checkpoints=self.checkpoints,
            background=self.background,
            tool_use=self.tool_use,
            limits=self.limits,
            memory=self.memory,
            mcp=self.mcp,
            checks=self.checks,
            output_schema=self.output_schema,
            agent_name=self.subagent.name if self.subagent is not None else None,
        )

    # --- state the turn uses -------------------------------------------------------------

    @property
    def instructions(self) -> str:
        """The system prompt, built once so every request's prefix stays byte-identical."""
        if self._own_instructions is not None:
            return self._own_instructions
        lean = self.lean
        if self._instructions is None or self._instructions_lean != lean:  # a learned window may change the profile
            self._instructions_lean = lean
            self._instructions = self._parts.instructions or build_instructions(
                self.mode, self.config.agent_home, memory=self.config.memory, lean=lean
            )
        return self._instructions

    def use_instructions(self, text: str) -> None:
        """A front end's own system prompt for every request (the Claude Agent SDK's
        ``--system-prompt`` / ``--append-system-prompt``); the lean profile no longer applies."""
        self._own_instructions = text

    @property
    def lean(self) -> bool:
        """The lean profile (context/profile.py): a small window, or `context_profile = "lean"`.
        Not in a subagent, which has its own prompt and few tools."""
        return (
            self._parts.instructions is None
            and self._own_instructions is None
            and is_lean(self.config.context_profile, self.window.tokens)
        )

    def build_initial_context(self):
        """A fresh initial context: AGENTS.md re-read, skills re-scanned, full environment."""
        config, permissions = self.config, self.approvals.permissions
        return fresh_initial_context(
            cwd=config.cwd,
            agent_home=config.agent_home,
            mode=self.mode,
            approval_policy=config.approval_policy,
            sandbox_mode=config.sandbox_mode,
            network_access=config.network_access,
            writable_roots=config.writable_roots,
            project_doc_max_bytes=config.project_doc_max_bytes,
            fallback_filenames=config.project_doc_fallback_filenames,
            context_window=self.window.tokens,
            plugin_skills=self.plugins.skills,
            hidden=permissions.read_denied if permissions.hides_any() else None,  # Read deny rules
        )

    def mark_resumed(self, info: ResumeInfo) -> None:
        """The session continues the file ``info`` describes (session/resume.py filled it): its id."""
        self.id = info.session_id
        self.resumed = info

    def restart_context(self, initial: InitialContext) -> None:
        """A compaction sent ``initial`` in full: later turns' environment diffs start from it."""
        self.initial = initial
        self.environment = initial.environment

    def take_load_warnings(self) -> list[str]:
        """Problems met reading the configuration, plugins and agent files, once: the TUI shows
        them as it starts, otherwise the first turn does."""
        if "load warnings" in self._told:
            return []
        self._told.add("load warnings")
        agent_warnings = self.agents.warnings if self.agents is not None else ()
        trust = self.trust
        told = trust.answer is False or not self.approvals.interactive  # otherwise the TUI asks first
        skipped = [line] if told and (line := trust.skipped_line()) else []
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
        changed in the environment (appended, never edited, so the prefix stays stable)."""
        if self.initial is None:
            if self.shell_snapshot is not None:
                self.shell_snapshot.start()  # in the background, while the first request goes out
            self.initial = self.build_initial_context()
            self.environment = self.initial.environment
            for warning in (*self.take_load_warnings(), *self.initial.warnings):
                emit(ev.Warning(warning))
            if sandbox_warning := start_warning(self.config.sandbox_mode, self.approvals.interactive):
                emit(ev.Warning(sandbox_warning))
            if self.approvals.sandbox is not None and self.approvals.sandbox.mode == "workspace-write":
                start_watching(self.approvals.sandbox.workspace_roots)  # nested .git found while the model thinks
                if notice := home_notice(self.config.cwd):
                    emit(ev.Warning(notice))  # once: what stays read-only when the home folder is writable
            self.history.extend(self.initial.items)
            return
        current = self.detect_environment()
        if change := environment_diff(self.environment, current):
            self.record(user(change))
        self.environment = current

    @property
    def initial_tokens(self) -> int:
        """Tokens of the initial context, counted once per initial context (checked every turn)."""
        if self.initial is None:
            return 0
        if self._initial_tokens is None or self._initial_tokens[0] is not self.initial:
            self._initial_tokens = (self.initial, self.tokens.items_tokens(self.initial.items))
        return self._initial_tokens[1]

    def detect_environment(self) -> EnvironmentContext:
        config = self.config
        return EnvironmentContext.detect(
            config.cwd, config.approval_policy, config.sandbox_mode, config.network_access, config.writable_roots
        )

    def skill_fragments(self, text: str) -> list[str]:
        """Bodies of the skills ``text`` mentions as ``$name``, for this turn."""
        return skill_injections(text, self.initial.skills) if self.initial else []

    @property
    def web_search_mode(self) -> str:
        """The provider's own web search (``web_search``): unset means cached in the TUI, off in exec.
        A command's turn with fewer tools (/review) does not search either."""
        if self.tool_limit is not None and "web_search" not in self.tool_limit:
            return "off"
        # The lean profile (a small window) leaves it off unless configured: results would not fit.
        return self.config.web_search or ("cached" if self.approvals.interactive and not self.lean else "off")

    def tool_specs(self) -> list[ToolSpec]:
        allowed = set(tools_for_mode(self.mode, self._parts.tools.names, self._parts.tools.is_read_only))
        specs = [spec for spec in self._parts.tools.specs if spec.name in allowed and self._within_limit(spec.name)]
        if not self.lean:
            return [spec for spec in specs if spec.name not in (TOOL_SEARCH, TOOL_CALL)]
        if (
            self._parts.lean_tools and TOOL_SEARCH not in self._parts.tools
        ):  # first lean request: the pair joins the registry
            self._parts.tools.replace(
                (), [ToolSearchTool(self.tools_behind_search), ToolCallTool(self.tools_behind_search)]
            )
            specs = [
                spec
                for spec in self._parts.tools.specs
                if self._within_limit(spec.name)
                and spec.name in set(tools_for_mode(self.mode, self._parts.tools.names, self._parts.tools.is_read_only))
            ]
        library = prompt_library(self.config.agent_home)
        offered = [spec for spec in specs if offered_directly(spec.name, self.mode)]
        if not self.tools_behind_search():
            offered = [spec for spec in offered if spec.name not in (TOOL_SEARCH, TOOL_CALL)]
        return [lean_spec(spec, library) for spec in offered]

    def tools_behind_search(self) -> list[Tool]:
        """In the lean profile: the tools ``tool_search`` finds (memory, task, MCP), as the mode allows."""
        if not self.lean:
            return []
        names = [
            name for name in self._parts.tools.names if behind_search(name, self.mode) and self._within_limit(name)
        ]
        allowed = set(tools_for_mode(self.mode, names, self._parts.tools.is_read_only))
        tools = [self._parts.tools.get(name) for name in names if name in allowed]
        return [tool for tool in tools if tool is not None]  # MCP tools unlisted by MCP's search mode too

    def tool_allowed(self, name: str) -> bool:
        return bool(tools_for_mode(self.mode, [name], self._parts.tools.is_read_only)) and self._within_limit(name)

    def _within_limit(self, name: str) -> bool:
        return self.tool_limit is None or name in self.tool_limit

    def switch_model(self, model: str) -> None:
        """Use ``model`` from the next request on: ``/model``, and a command file's ``model:`` for its
        turn. Its client is created lazily; its window is what was learned about it, else looked up
        (and asked for) afresh. The config stays as loaded."""
        self.model = model
        if self._client is not None:  # closed by aclose() while the event loop still runs, not when collected
            self._retired_clients.append(self._client)
        self._client = None
        self._count_with(self.counter_for(model))
        self.window.switch(model)
        self.tool_use.switch(model)

    def switch_mode(self, mode: str) -> None:
        """Use ``mode``'s tools and guidance from the next request on (``/mode``). The model hears of it
        through a note the command appends; the system prompt is rebuilt only at the next compaction."""
        if mode not in MODES:
            raise ValueError(f"unknown mode {mode!r}")
        self.mode = mode

    def counter_for(self, model: str) -> TokenCounter:
        """``model``'s counter, kept per model so switching back finds its calibration again."""
        return self.counters.for_model(model)

    def _count_with(self, counter: TokenCounter) -> None:
        """Count with another model's counter from now on; the history is recounted once (unless
        both count alike), and the last usage report, in the old model's tokens, is not reused."""
        previous, self.counters.current = self.tokens, counter
        counter.use_loaded()  # an encoding this process already loaded counts exactly at once
        if not counter.counts_like(previous):
            self.history.recount()
        self._initial_tokens = None
        self.distrust_last_usage()

    @property
    def memory(self) -> MemoryBook | None:
        """The memory stores (``memory/book.py``), opened on first use; None when `memory = false`."""
        if self._memory is None and self.config.memory:
            self._memory = MemoryBook(self.config.agent_home, self.config.cwd, lambda: self.rollout.path)
        return self._memory

    @property
    def tools(self) -> ToolRegistry:
        return self._parts.tools

    def tool_context(self, call_id: str, emit: Emit) -> ToolContext:
        context = ToolContext(
            cwd=self.config.cwd,
            data_dir=self.config.agent_home,
            emit=emit,
            call_id=call_id,
            output_token_limit=self.tool_output_limit,
            shell_timeout_ms=self.config.shell_timeout_ms,
            shell_snapshot=self.shell_snapshot,
            memory=self.memory,
            read_limits=self.config.read_file,
            background=self.background,
            web=WebSettings(self.config.web_fetch_allow_private),
            editor=self.editor_files,
            command_runner=self.client_terminal(call_id, emit) if self.client_terminal else None,
        )
        return self.approvals.prepare(context, call_id)  # sandbox, writable roots, scrubbed env

    def record(self, item: Item) -> None:
        self.history.record(item)

    @property
    def supports_images(self) -> bool:
        """Whether the current model sees images (`model_supports_images` overrides the table)."""
        return self.counters.for_model(self.model).vision

    def request_items(self, emit: Emit) -> list[Item]:
        """The history as the next request sends it: a model without vision gets notes for images."""
        items = self.history.for_request()
        if self.supports_images:
            return items
        items, replaced = without_images(items, self.model)
        if replaced and "no vision" not in self._told:
            self._told.add("no vision")
            emit(ev.Warning(no_vision_warning(self.model)))
        return items

    def record_usage(self, usage: Usage | None) -> None:
        if usage is not None:
            self.last_usage = usage
            self.total_usage = self.total_usage + usage
            self._usage_mark = len(self.history)
            self.learned.usage_total(self.total_usage)  # a resume shows the same totals

    def count_usage(self, usage: Usage) -> None:
        """Tokens spent outside the context's own requests (a summary, a subagent's turn): in the totals only."""
        self.total_usage = self.total_usage + usage

    def apply_learned(self, learned: Learned) -> None:
        """What a resumed file's learned lines said (session/learned.py): calibration per model, the
        current model's window, the last compaction, the running totals."""
        for model, (ratio, reports) in learned.calibrations.items():
            self.counter_for(model).calibration.restore(ratio, reports)
        if (window := learned.windows.get(self.model)) is not None:
            self.window.restore(*window)
        if learned.compaction is not None:
            self.compaction.history_len_after, self.compaction.tokens_after = learned.compaction
        if learned.usage is not None:
            self.total_usage = learned.usage
        self.compaction.last = learned.shown

    def rewind(self, index: int) -> str:
        """Take the conversation back to just before the prompt at ``index`` (/rewind); returns it."""
        prompt = self.checkpoints.rewind_conversation(index)
        self.distrust_last_usage()
        compaction = self.compaction
        if compaction.history_len_after is not None and index < compaction.history_len_after:
            # Back into what the last compaction kept: its length is the history's now, so the
            # file's learned line stays true (a resume checks it against the history it loads).
            compaction.history_len_after = index
            self.learned.compaction_finished(compaction)
        return prompt

    @property
    def effective_window(self) -> int:
        return effective_window(self.window.tokens)

    @property
    def auto_compact_setting(self) -> AutoCompactSetting:
        """The auto-compaction threshold in force: ``/autocompact``'s, else the config's."""
        config = self.config
        return self.compaction.setting or AutoCompactSetting(
            config.auto_compact, config.auto_compact_percent, config.auto_compact_token_limit
        )

    def set_auto_compact(self, *, enabled: bool, percent: int | None = None, tokens: int | None = None) -> None:
        """``/autocompact``: the threshold for the rest of the session (a percentage of the usable
        window, or tokens; the config keys as today). A compaction that could not help is tried again."""
        setting = replace(self.auto_compact_setting, enabled=enabled)
        if percent is not None:
            setting = replace(setting, percent=percent, token_limit=None)
        if tokens is not None:
            setting = replace(setting, token_limit=tokens)
        self.compaction.setting = setting
        self.compaction.history_len_after = None

    @property
    def tool_output_limit(self) -> int:
        """Tokens one tool output keeps in the context (the rest goes to its spill file)."""
        config = self.config
        return tool_output_limit(
            config.tool_output_token_limit, self.window.tokens, explicit="tool_output_token_limit" in config.raw
        )

    @property
    def auto_compact_limit(self) -> int | None:
        """Context tokens at which auto-compaction starts; None when auto-compaction is off."""
        setting = self.auto_compact_setting
        return auto_compact_limit(
            self.window.tokens, enabled=setting.enabled, percent=setting.percent, token_limit=setting.token_limit
        )

    def context_tokens(self) -> int:
        """Tokens the next request will carry: the last report plus estimates since (estimates
        calibrated to the server's counts)."""
        mark = self._usage_mark
        if self.last_usage is not None and mark is not None and mark <= len(self.history):
            reported = self.last_usage.input_tokens + self.last_usage.output_tokens
            return reported + self.tokens.calibrated(self.history.estimated_tokens_since(mark))
        fixed = self.tokens.prompt_overhead(self.instructions, self.tool_specs())
        return self.tokens.calibrated(fixed + self.history.estimated_tokens)

    async def count_exactly(self) -> None:
        """Count with the model's tokenizer from now on (when it has one): loaded off the event
        loop, once; the history is recounted once, so estimates and exact counts never mix."""
        if await self.tokens.load_async():
            self.history.recount()
            self._initial_tokens = None

    async def count_exactly_near(self, limit: int | None, extra: int = 0) -> None:
        """Start counting exactly when the context (plus ``extra`` tokens about to join it) is
        within the estimate's error of ``limit`` (context/tokens.py), before deciding by it."""
        if limit is not None and self.tokens.can_be_exact and self.tokens.near(self.context_tokens() + extra, limit):
            await self.count_exactly()

    def distrust_last_usage(self) -> None:
        """Estimate the whole context again: the last report does not describe what is sent."""
        self._usage_mark = None

    def replace_history(self, items: list[Item]) -> None:
        """Swap in a compacted history. The last usage report no longer describes it.

        History.replace is the call point session files record (the old items stay in the file).
        The prefix changes here anyway, so the system prompt is rebuilt for the current mode
        (a mid-session /mode switch was only an appended note, which compaction drops).
        """
        self.history.replace(items)
        self.window.sent_items = len(items)  # steps are measured in the new history from here
        self.compaction.last_step = None
        self._usage_mark = None
        self._instructions = None

    def token_count_event(self) -> ev.TokenCount:
        return ev.TokenCount(
            last=self.last_usage or Usage(),
            total=self.total_usage,
            context_used=self.context_tokens(),
            context_window=self.effective_window,
            counting_method=self.tokens.counting_method,
            accuracy=self.tokens.accuracy,
            compact_at=self.auto_compact_limit,
        )
