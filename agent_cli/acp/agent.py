"""The ACP agent: sessions created, loaded and prompted by the client, each a `Session` driven
through the command layer exactly as the TUI and `agent exec` drive theirs."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from acp import PROTOCOL_VERSION, RequestError
from acp.helpers import update_agent_thought_text, update_current_mode
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    AuthMethodAgent,
    AvailableCommand,
    AvailableCommandInput,
    AvailableCommandsUpdate,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PermissionOption,
    PromptCapabilities,
    PromptResponse,
    SessionMode,
    SessionModeState,
    SetSessionModeResponse,
    StopReason,
    ToolCallUpdate,
    UnstructuredCommandInput,
)
from acp.schema import Usage as AcpUsage

from agent_cli import __version__
from agent_cli import events as ev
from agent_cli.acp.client_files import ClientFiles
from agent_cli.acp.client_servers import server_specs
from agent_cli.acp.client_terminal import ClientTerminal
from agent_cli.acp.elicitation import ask_editor
from agent_cli.acp.elicitation import supports as supports_elicitation
from agent_cli.acp.prompt_blocks import PromptInput
from agent_cli.acp.tool_calls import KINDS
from agent_cli.acp.updates import UpdateTranslator
from agent_cli.acp.worktree_options import enter_for_session, leave, resumed_in, set_up_session
from agent_cli.commands.conversation import Conversation
from agent_cli.commands.registry import list_commands
from agent_cli.config import MODES, Config, ConfigError, load_config
from agent_cli.models.base import Usage
from agent_cli.models.pricing import price_for
from agent_cli.models.registry import resolve_api_key
from agent_cli.operations import Interrupt, SetMode, ShellCommand, UserInput, is_mode
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.resume import restore
from agent_cli.session.session import new_session_id
from agent_cli.store.catalog import find_session
from agent_cli.store.replay import replay_events
from agent_cli.store.rollout import RolloutError
from agent_cli.trust.gate import provider_in_force

log = logging.getLogger("agent_cli.acp")
MODE_DESCRIPTIONS = {
    "agent": "reads, runs commands and edits files",
    "ask": "read-only: answers questions about the code",
    "plan": "read-only: explores and writes a plan",
}
PERMISSION_OPTIONS = [
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Allow for this session", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
]
Decision = Literal["approve", "approve_session", "deny"]
DECISIONS: dict[str, Decision] = {"allow_once": "approve", "allow_always": "approve_session", "reject_once": "deny"}
STOP_REASONS: dict[str, StopReason] = {"max_turns": "max_turn_requests", "max_budget": "max_turn_requests"}


def turn_usage(before: Usage, after: Usage) -> AcpUsage:
    """The tokens of one prompt turn, in the protocol's shape."""
    input_tokens = after.input_tokens - before.input_tokens
    output_tokens = after.output_tokens - before.output_tokens
    return AcpUsage(
        total_tokens=input_tokens + output_tokens,
        input_tokens=input_tokens,
        output_tokens=output_tokens,
        thought_tokens=after.reasoning_tokens - before.reasoning_tokens,
        cached_read_tokens=after.cached_input_tokens - before.cached_input_tokens,
    )


class AcpAgent:
    def __init__(self, overrides: list[str], flags: dict[str, Any], trust: bool = False):
        self.overrides, self.flags = overrides, flags  # `agent acp -c key=value -m model ...`
        self.trust = trust  # `agent acp --trust`: the repository's own servers and hooks run
        self.conn: Any = None
        self.sessions: dict[str, Session] = {}
        self.client_capabilities = ClientCapabilities()
        self.initialized = False  # sessions only after `initialize` (the protocol's order)
        self.worktrees: dict[str, Any] = {}  # session id -> the worktree it runs in (_meta.worktree)
        self.first_inputs: dict[str, str] = {}  # session id -> a new worktree's set-up command

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(
        self,
        protocol_version: int,
        client_capabilities: ClientCapabilities | None = None,
        client_info: Implementation | None = None,
        **_: Any,
    ) -> InitializeResponse:
        self.client_capabilities = client_capabilities or ClientCapabilities()
        self.initialized = True
        log.info("initialize: client %s, protocol %s", client_info.name if client_info else "?", protocol_version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(image=True, embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
            ),
            auth_methods=[
                AuthMethodAgent(
                    id="environment",
                    name="API key in the environment",
                    description="Set the provider's key variable (e.g. OPENAI_API_KEY or "
                    "ANTHROPIC_API_KEY) where the editor starts the agent.",
                )
            ],
            agent_info=Implementation(name="agent-cli", title="agent-cli", version=__version__),
        )

    async def authenticate(self, method_id: str, **_: Any) -> None:
        self._config(Path.cwd())  # raises auth_required while the key is still missing

    # --- sessions -------------------------------------------------------------------------

    async def new_session(
        self, cwd: str, mcp_servers: list | None = None, worktree: Any = None, worktreeBase: Any = None, **_: Any
    ) -> NewSessionResponse:
        self._require_initialized()
        entered = await enter_for_session(Path(cwd), worktree, worktreeBase)  # _meta.worktree
        config = self._config(entered.cwd if entered is not None else Path(cwd))
        sid = new_session_id()
        specs = server_specs(mcp_servers or [])
        session = open_session(
            config, interactive=True, mcp_servers=specs, session_id=sid, **self._client_parts(sid, config)
        )
        if entered is not None:
            self.worktrees[session.id] = entered
            if (setup := set_up_session(entered, session.config.raw)) is not None:
                self.first_inputs[session.id] = setup
        self._open(session)
        return NewSessionResponse(session_id=session.id, modes=self._modes(session))

    async def load_session(
        self, cwd: str, session_id: str, mcp_servers: list | None = None, **_: Any
    ) -> LoadSessionResponse:
        self._require_initialized()
        if (session := self.sessions.get(session_id)) is not None:  # open here already: it holds the file's lock
            if session.running:
                raise RequestError.invalid_request(
                    {"message": "a prompt is running in this session; cancel it or wait"}
                )
            config = session.config
        else:
            entered = await asyncio.to_thread(resumed_in, session_id, Path(cwd))  # it ran in a worktree
            if entered is not None:
                self.worktrees[session_id] = entered
            config = self._config(entered.cwd if entered is not None else Path(cwd))
            try:
                path = find_session(config.agent_home, session_id)
                specs = server_specs(mcp_servers or [])
                session = await asyncio.to_thread(
                    lambda: restore(
                        open_session(
                            config, interactive=True, mcp_servers=specs, **self._client_parts(session_id, config)
                        ),
                        path,
                    )
                )
            except RolloutError as exc:
                raise RequestError.resource_not_found(session_id) from exc
            self._open(session, requested_id=session_id)
        translator = UpdateTranslator(config.cwd, replay=True)
        for event in replay_events(list(session.history.items)):
            await self._send(session_id, translator.updates(event))
        return LoadSessionResponse(modes=self._modes(session))

    def _client_parts(self, sid: str, config: Config) -> dict[str, Any]:
        """What the editor's client does for session ``sid``: run its commands, hold its files."""
        parts: dict[str, Any] = {}
        if self.client_capabilities.terminal:
            folder = config.agent_home / "tool-commands"
            parts["client_terminal"] = lambda call_id, emit: ClientTerminal(self.conn, sid, call_id, emit, folder)
        fs = self.client_capabilities.fs
        if fs is not None and (fs.read_text_file or fs.write_text_file):
            parts["editor_files"] = ClientFiles(self.conn, sid, bool(fs.read_text_file), bool(fs.write_text_file))
        return parts

    def _open(self, session: Session, requested_id: str | None = None) -> None:
        if session.mcp is not None and supports_elicitation(self.client_capabilities):
            session.mcp.manager.allow_questions()
        session.start_mcp()
        self.sessions[requested_id or session.id] = session
        asyncio.get_running_loop().call_soon(  # after the response, as the protocol expects
            lambda: asyncio.ensure_future(self._announce_commands(requested_id or session.id, session))
        )

    async def set_session_mode(self, session_id: str, mode_id: str, **_: Any) -> SetSessionModeResponse:
        session = self._session(session_id)
        if not is_mode(mode_id):
            raise RequestError.invalid_params({"mode_id": mode_id, "known": list(MODES)})
        if session.running:
            raise RequestError.invalid_request({"message": "a prompt is running; cancel it or wait"})
        async for _event in Conversation(session).submit(SetMode(mode_id)):
            pass
        await self._send(session_id, [update_current_mode(session.mode)])
        return SetSessionModeResponse()

    # --- prompts --------------------------------------------------------------------------

    async def prompt(self, session_id: str, prompt: list, **_: Any) -> PromptResponse:
        session = self._session(session_id)
        if session.running:
            raise RequestError.invalid_request({"message": "a prompt is already running in this session"})
        given = PromptInput(prompt, session.config.cwd)
        if not given.text and not given.images:  # no blocks, or only kinds we do not take (audio)
            given.cleanup()
            raise RequestError.invalid_params({"message": "the prompt is empty: send text, an image or a resource"})
        translator = UpdateTranslator(
            session.config.cwd, price=price_for(session.model, session.config.raw.get("model_prices"))
        )
        usage_before = session.total_usage
        stop_reason: StopReason = "end_turn"
        failure = None
        mode = session.mode
        try:
            async for event in self._inputs(session_id, session, given):
                if session.mode != mode:  # a typed /mode, or a plan approved: the editor's selector follows
                    mode = session.mode
                    await self._send(session_id, [update_current_mode(mode)])
                if isinstance(event, ev.ApprovalRequest):
                    self._ask_permission(session_id, event)
                elif isinstance(event, ev.ElicitationRequest):
                    ask_editor(self.conn, self.client_capabilities, session_id, event)
                elif isinstance(event, ev.TurnAborted):
                    stop_reason = "cancelled"
                elif isinstance(event, ev.TurnFailed):
                    if event.reason in STOP_REASONS:
                        stop_reason = STOP_REASONS[event.reason]
                    else:
                        failure = event.message
                elif isinstance(event, ev.CommandAction):
                    await self._send(
                        session_id,
                        translator.updates(
                            ev.Notice(
                                f"/{event.action} belongs to the terminal UI; start a new session in the editor instead"
                            )
                        ),
                    )
                await self._send(session_id, translator.updates(event))
        finally:
            given.cleanup()
        if failure is not None and stop_reason != "cancelled":
            raise RequestError.internal_error({"message": failure})
        return PromptResponse(stop_reason=stop_reason, usage=turn_usage(usage_before, session.total_usage))

    async def _inputs(self, session_id: str, session: Session, given: PromptInput):
        """The prompt's events, after those of a new worktree's set-up command (first prompt only)."""
        conversation = Conversation(session)
        if (setup := self.first_inputs.pop(session_id, None)) is not None:
            async for event in conversation.submit(ShellCommand(setup)):
                yield event
        async for event in conversation.submit(UserInput(given.text, tuple(given.images))):
            yield event

    async def cancel(self, session_id: str, **_: Any) -> None:
        if (session := self.sessions.get(session_id)) is not None:
            async for _event in Conversation(session).submit(Interrupt()):  # as Esc: the tool and the request stop
                pass

    def _ask_permission(self, session_id: str, request: ev.ApprovalRequest) -> None:
        """Ask the client without blocking the event stream; the turn waits on the request's future."""

        async def ask() -> None:
            decision: Decision = "deny"
            try:
                answer = await self.conn.request_permission(
                    session_id=session_id,
                    tool_call=ToolCallUpdate(
                        tool_call_id=request.call_id,
                        title=request.summary,
                        kind=KINDS.get(request.tool, "other"),
                        status="pending",
                    ),
                    options=PERMISSION_OPTIONS,
                )
                if isinstance(answer.outcome, AllowedOutcome):
                    decision = DECISIONS.get(answer.outcome.option_id, "deny")
            except Exception as exc:  # a client that cannot answer denies
                log.warning("permission request failed: %s", exc)
            request.answer(ev.ApprovalDecision(decision))

        asyncio.ensure_future(ask())

    # --- helpers --------------------------------------------------------------------------

    def _config(self, cwd: Path) -> Config:
        try:
            config = replace(load_config(cwd, self.overrides, self.flags), trust_repository=self.trust)
        except ConfigError as exc:
            raise RequestError.invalid_params({"message": f"configuration error: {exc}"}) from None
        provider = provider_in_force(config)  # a repository's provider waits for trust
        if provider.requires_key and provider.env_key and not resolve_api_key(provider):
            raise RequestError.auth_required(
                {"message": f"{provider.env_key} is not set (needed by provider '{provider.id}')"}
            )
        return config

    def _require_initialized(self) -> None:
        if not self.initialized:
            raise RequestError.invalid_request({"message": "call initialize first"})

    def _session(self, session_id: str) -> Session:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"message": f"unknown session {session_id!r}; create or load it first"})
        return session

    def _modes(self, session: Session) -> SessionModeState:
        modes = [SessionMode(id=mode, name=mode.capitalize(), description=MODE_DESCRIPTIONS[mode]) for mode in MODES]
        return SessionModeState(current_mode_id=session.mode, available_modes=modes)

    async def _announce_commands(self, session_id: str, session: Session) -> None:
        commands = [
            AvailableCommand(
                name=info.name,
                description=info.description or info.name,
                input=AvailableCommandInput(root=UnstructuredCommandInput(hint=info.argument_hint))
                if info.argument_hint
                else None,
            )
            for info in list_commands(session)
        ]
        await self._send(
            session_id,
            [AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)],
        )
        if skipped := session.trust.skipped_line():  # the editor cannot answer the trust question: say what did not run
            await self._send(
                session_id,
                [update_agent_thought_text(skipped.replace("pass --trust to agent exec", "start `agent acp --trust`"))],
            )

    async def _send(self, session_id: str, updates: list) -> None:
        for update in updates:
            with contextlib.suppress(ConnectionError):  # the client left: the connection ends the agent
                await self.conn.session_update(session_id=session_id, update=update)

    async def aclose(self) -> None:
        for session in self.sessions.values():
            Conversation(session).interrupt()  # the Interrupt operation, from a handler that cannot wait
            with contextlib.suppress(Exception):
                await session.aclose()
        self.sessions.clear()
        for entered in self.worktrees.values():  # unchanged: removed; changed: kept
            await asyncio.to_thread(leave, entered)
        self.worktrees.clear()
