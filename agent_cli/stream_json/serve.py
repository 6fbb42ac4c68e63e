"""The stream-json front end: reads the host's NDJSON on stdin (``user`` messages, one turn each;
``control_request``; ``control_response``), drives the session through the command layer like
the other front ends, and writes the messages of each turn and its ``result`` on stdout.

It owns no turn loop: each user message is a ``UserInput`` operation and each control request
the operations it stands for (``set_permission_mode``: the approval policy, sandbox, edits and
mode; ``rewind_files``: ``Rewind``), sent through ``commands.conversation`` as every front end
sends them. The host's control requests are answered while a turn runs (``interrupt`` among
them); anything it asks that we do not do is answered with an error, never left waiting."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from agent_cli import __version__
from agent_cli import events as ev
from agent_cli.agents.definition import agent_from_fields
from agent_cli.agents.task_tool import TASK_TOOL, TaskTool
from agent_cli.commands.context_usage import context_usage
from agent_cli.commands.conversation import Conversation
from agent_cli.commands.errors import InputError
from agent_cli.commands.registry import list_commands
from agent_cli.commands.typed_input import read_input
from agent_cli.operations import (
    AddHooks,
    ApproveForSession,
    Interrupt,
    Operation,
    Rewind,
    SetApprovalPolicy,
    SetMode,
    SetModel,
    SetSandbox,
    UserInput,
)
from agent_cli.session.session import Session
from agent_cli.stream_json import messages as msg
from agent_cli.stream_json.channel import Channel, ControlError
from agent_cli.stream_json.flags import PERMISSION_MODES
from agent_cli.stream_json.host_hooks import hook_specs
from agent_cli.stream_json.host_mode import mode_in_force, refusal
from agent_cli.stream_json.prompt_content import PromptContent
from agent_cli.stream_json.translate import TurnTranslator

log = logging.getLogger("agent_cli.stream_json")
INTERACTIVE_ONLY = ("quit", "new", "resume", "rewind", "copy", "detach")
EDITS = "apply_patch"  # approved for the session in acceptEdits


@dataclass
class ServeOptions:
    permission_mode: str = "default"
    prompt_tool: bool = False  # --permission-prompt-tool stdio: approvals go to can_use_tool
    partial: bool = False  # --include-partial-messages
    schema: bool = False  # --json-schema: the result carries structured_output
    replay: bool = False  # --replay-user-messages: each user message comes back with its uuid (rewind_files)
    states: bool = False  # CLAUDE_CODE_SDK_READS_SESSION_STATE: system/session_state_changed frames
    states_shown: bool = False  # CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS: the caller sees them too


class StreamJsonServer:
    def __init__(self, session: Session, channel: Channel, options: ServeOptions):
        self.session, self.channel, self.options = session, channel, options
        self.turn: TurnTranslator | None = None
        self.status = 0
        self._tasks: set[asyncio.Task] = set()
        self._queued: set[asyncio.Task] = set()  # operations waiting for the running turn (apply_or_queue)
        self.prompt_ids: dict[str, int] = {}  # a user message's uuid -> its prompt's index in the history

    async def begin(self) -> None:
        """What the permission mode grants from the start (its policy, sandbox and mode came with
        the config, where an -a / -s of the user's wins)."""
        if self.options.permission_mode == "acceptEdits":
            await self.apply(ApproveForSession(tools=(EDITS,)))

    # --- input ------------------------------------------------------------------------------

    async def serve(self, lines: AsyncIterator[bytes]) -> int:
        """Until stdin ends: every user message a turn, in order; then the last turn finishes."""
        queue: asyncio.Queue[dict | None] = asyncio.Queue()
        worker = asyncio.create_task(self._turns(queue))
        try:
            async for line in lines:
                message = self._parse(line)
                if message is None:
                    continue
                kind = message.get("type")
                if kind == "user":
                    queue.put_nowait(message)
                elif kind == "control_request":
                    self._spawn(self._control(message))
                elif kind == "control_response":
                    self.channel.answered(message.get("response") or {})
                elif kind in ("control_cancel_request", "keep_alive", "update_environment_variables"):
                    self._environment(message)
                else:
                    log.warning("ignored a message of type %r", kind)
                if worker.done():
                    break
        finally:
            queue.put_nowait(None)
            self.channel.close()  # nobody can answer now: a question still open is a no, never a hang
        await worker  # stdin's end lets the running turn finish, as claude does (query() closes it at once)
        for task in list(self._tasks):
            task.cancel()
        return 0  # stdin ended: the host is done (a failed turn was its result's to say)

    def _parse(self, line: bytes) -> dict | None:
        text = line.decode("utf-8", errors="replace").strip()
        if not text:
            return None
        try:
            message = json.loads(text)
        except ValueError as exc:
            log.warning("stdin: not JSON (%s): %.200s", exc, text)
            return None
        return message if isinstance(message, dict) else None

    def _environment(self, message: dict) -> None:
        if message.get("type") == "update_environment_variables" and isinstance(message.get("variables"), dict):
            os.environ.update({str(k): str(v) for k, v in message["variables"].items()})

    def _spawn(self, coro) -> asyncio.Task:
        task = asyncio.create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    # --- turns ------------------------------------------------------------------------------

    async def _turns(self, queue: asyncio.Queue[dict | None]) -> None:
        while (message := await queue.get()) is not None:
            content = PromptContent(message.get("message"))
            prompt_id = str(message.get("uuid") or msg.new_uuid())
            try:
                await self.run_turn(content.text, content.images, prompt_id)
            finally:
                content.cleanup()

    async def run_turn(self, text: str, images: list, prompt_id: str | None = None) -> dict:
        session, options = self.session, self.options
        if self._queued:  # a switch asked for during the last turn comes first: this prompt runs after it
            await asyncio.wait(list(self._queued))
        session.limits.restart()  # --max-turns and --max-budget-usd count per prompt, as in claude
        self.state("running")
        self.channel.write(self._init_message())
        if options.replay and prompt_id is not None:
            self.channel.write({**msg.user_text(session.id, text), "uuid": prompt_id, "isReplay": True})
        prompts_before = len(session.checkpoints.prompts())
        turn = self.turn = TurnTranslator(session, self.channel.write, options.partial, options.schema)
        op = read_message(text, images)
        if not text.strip() and not images:
            turn.failure = ("the message has no text", None)
        elif (refused := refusal(op)) is not None:
            turn.render(ev.InputRejected(refused))
        else:
            async for event in Conversation(session).submit(op):
                if isinstance(event, ev.ApprovalRequest):
                    self._spawn(self._can_use_tool(event, turn))
                elif isinstance(event, ev.CommandAction) and event.action in INTERACTIVE_ONLY:
                    event = ev.InputRejected(f"/{event.action} belongs to the terminal UI")
                turn.render(event)
        result = turn.result()
        self.status = 1 if result["is_error"] else 0
        prompts = session.checkpoints.prompts()
        if prompt_id is not None and len(prompts) > prompts_before:
            self.prompt_ids[prompt_id] = prompts[prompts_before].index  # what rewind_files goes back to
        self.channel.write(result)
        self.turn = None
        self.state("idle")
        return result

    def state(self, state: str) -> None:
        """system/session_state_changed (running, requires_action, idle): the SDK closes stdin on idle."""
        if self.options.states:
            frame = {"type": "system", "subtype": "session_state_changed", "state": state}
            frame.update({"session_id": self.session.id, "uuid": msg.new_uuid()})
            self.channel.write(frame if self.options.states_shown else {**frame, "sdk_host_only": True})

    def _init_message(self) -> dict:
        session = self.session
        tools = [msg.claude_tool(spec.name, {}, session.config.cwd)[0] for spec in session.tool_specs()]
        commands = [info.name for info in list_commands(session)]
        mode = mode_in_force(session.mode, self.options.permission_mode)
        return msg.system_init(session, mode, tools, self._servers(), commands)

    def _servers(self) -> list[dict]:
        if self.session.mcp is None:
            return []
        states = self.session.mcp.manager.states()
        return [{"name": state.name, "status": _MCP_STATUS.get(state.status, state.status)} for state in states]

    # --- approvals ----------------------------------------------------------------------------

    async def _can_use_tool(self, request: ev.ApprovalRequest, turn: TurnTranslator) -> None:
        """Ask the host's ``can_use_tool``; no answer (or an error) is a no."""
        name, arguments = turn.calls.get(request.call_id, (request.tool, {}))
        claude_name, claude_input = msg.claude_tool(name, arguments, self.session.config.cwd)
        decision = ev.ApprovalDecision("deny", reason="the host did not answer")
        self.state("requires_action")
        try:
            answer = await self.channel.request(
                {
                    "subtype": "can_use_tool",
                    "tool_name": claude_name,
                    "input": claude_input,
                    "permission_suggestions": None,
                    "blocked_path": None,
                    "decision_reason": request.reason or f"approval policy {self.session.approvals.policy}",
                    "title": request.summary,
                    "tool_use_id": request.call_id,
                }
            )
            if answer.get("behavior") == "allow":
                updated = answer.get("updatedInput")
                changed = msg.our_arguments(name, updated, arguments) if isinstance(updated, dict) else None
                changed = changed if changed != arguments else None
                decision = ev.ApprovalDecision("approve", arguments=changed)
                await self._apply_permission_updates(answer.get("updatedPermissions"))
                verdict = self.session.approvals.permissions.decide(name, changed) if changed else None
                if verdict is not None and verdict.decision == "deny":  # a deny rule holds for the new input too
                    decision = ev.ApprovalDecision(
                        "deny", reason=f"the permission rule `{verdict.rule_text}` denies it"
                    )
            else:
                decision = ev.ApprovalDecision("deny", reason=str(answer.get("message") or "") or None)
                turn.denied(request.call_id, claude_input)
                if answer.get("interrupt"):
                    await self.apply(Interrupt())
        except ControlError as exc:
            log.warning("can_use_tool: %s", exc)
            decision = ev.ApprovalDecision("deny", reason=str(exc))
        finally:
            self.state("running")
            request.answer(decision)

    async def _apply_permission_updates(self, updates: Any) -> None:
        """``updatedPermissions`` (Claude's PermissionUpdate: the host's "always allow"): rules
        added and the mode set, for this session whatever ``destination`` says (no settings file
        is written); the other kinds are logged and left."""
        for update in updates if isinstance(updates, list) else []:
            kind = update.get("type") if isinstance(update, dict) else None
            try:
                if kind == "addRules" and update.get("behavior") in ("allow", "deny", "ask"):
                    for rule in update.get("rules") or []:
                        text = (
                            f"{rule['toolName']}({rule['ruleContent']})"
                            if rule.get("ruleContent")
                            else rule["toolName"]
                        )
                        await self.apply(
                            ApproveForSession(rule=text, behavior=update["behavior"], source="the SDK host")
                        )
                elif kind == "setMode":
                    await self.set_permission_mode(str(update.get("mode")))
                else:
                    log.warning("updatedPermissions: %s is not applied", kind)
            except (KeyError, TypeError, ValueError) as exc:  # a rule that cannot be read among them
                log.warning("updatedPermissions: %r not applied: %s", update, exc)

    # --- control requests from the host -------------------------------------------------------

    async def _control(self, message: dict) -> None:
        request_id = str(message.get("request_id"))
        request = message.get("request") or {}
        subtype = request.get("subtype")
        handler = getattr(self, f"_on_{subtype}", None) if isinstance(subtype, str) else None
        if handler is None:
            self.channel.write(msg.control_error(request_id, f"agent-cli does not support the {subtype!r} request"))
            return
        try:
            response = await handler(request)
        except Exception as exc:  # noqa: BLE001 - whatever failed is the host's answer, never a hang
            log.warning("control request %s failed: %s", subtype, exc)
            self.channel.write(msg.control_error(request_id, str(exc) or type(exc).__name__))
            return
        self.channel.write(msg.control_success(request_id, response))

    async def _on_initialize(self, request: dict) -> dict:
        session = self.session
        await self.apply(AddHooks(tuple(hook_specs(request.get("hooks"), self.channel))))
        self._define_agents(request.get("agents"))
        commands = [
            {"name": info.name, "description": info.description, "argumentHint": info.argument_hint}
            for info in list_commands(session)
        ]
        agents = getattr(session.agents, "agents", {}) if session.agents is not None else {}
        return {
            "commands": commands,
            "agents": [
                {"name": name, "description": getattr(agent, "description", "") or ""} for name, agent in agents.items()
            ],
            "output_style": "default",
            "available_output_styles": ["default"],
            "models": [{"value": session.model, "displayName": session.model, "description": "the session's model"}],
            "account": {},
            "pid": os.getpid(),
            "version": __version__,
            "hooks_applied": True,
        }

    async def _on_interrupt(self, request: dict) -> dict:
        await self.apply(Interrupt())  # as Esc: the running tool and the request stop
        return {}

    def _define_agents(self, table: Any) -> None:
        """``agents`` in ``initialize`` (the SDK's ``AgentDefinition``s) join the ``task`` tool."""
        task = self.session.tools.get(TASK_TOOL)
        if not isinstance(table, dict) or not isinstance(task, TaskTool):
            return
        definitions = []
        for name, entry in table.items():
            definition, problem = (
                agent_from_fields(name, entry, entry.get("prompt"), "sdk")
                if isinstance(entry, dict)
                else (None, "not an object")
            )
            if problem:
                log.warning("agent %r from the SDK host: %s", name, problem)
            if definition is not None:
                definitions.append(definition)
        task.define(definitions)

    async def _on_set_permission_mode(self, request: dict) -> dict:
        await self.set_permission_mode(str(request.get("mode")))
        return {}

    async def _on_set_model(self, request: dict) -> dict:
        await self.apply_or_queue(SetModel(str(request.get("model") or self.session.config.model)))
        return {}

    # --- operations ---------------------------------------------------------------------------

    async def apply(self, op: Operation) -> list[ev.Event]:
        """One operation the host asked for, and its events (its answer says how it went, no
        message does); a rejected one raises ValueError, which answers the request with an error."""
        events = [event async for event in Conversation(self.session).submit(op)]
        if rejected := [event for event in events if isinstance(event, ev.InputRejected)]:
            raise ValueError(rejected[0].message)
        return events

    async def apply_or_queue(self, op: Operation) -> None:
        """``op`` now, or, when it must wait for the running turn (a mode or model switch: the model
        reads it as a note between turns), after that turn: the host's request is answered at
        once, as claude answers it (and an approval that asks for it need not wait for its own turn)."""
        if Conversation(self.session).route(op).when != "queue":
            await self.apply(op)
            return

        async def later() -> None:
            try:
                await self.apply(op)
            except ValueError as exc:
                log.warning("%s not applied: %s", op, exc)

        task = self._spawn(later())
        self._queued.add(task)
        task.add_done_callback(self._queued.discard)

    async def set_permission_mode(self, mode: str) -> None:
        """Claude's permission mode as our operations: the approval policy, the sandbox, edits
        approved for the session, and the plan mode."""
        for op in permission_mode_operations(mode, self.options.prompt_tool, self.session.mode):
            await self.apply_or_queue(op)
        self.options.permission_mode = mode

    async def _on_mcp_status(self, request: dict) -> dict:
        servers = []
        if self.session.mcp is not None:
            manager = self.session.mcp.manager
            for state in manager.states():
                entry: dict[str, Any] = {"name": state.name, "status": _MCP_STATUS.get(state.status, state.status)}
                if state.error:
                    entry["error"] = state.error
                connection = manager.connections.get(state.name)
                if connection is not None and state.status == "ready":
                    entry["tools"] = [
                        {"name": tool.name, "description": tool.description or ""} for tool in connection.tools
                    ]
                servers.append(entry)
        return {"mcpServers": servers}

    async def _on_rewind_files(self, request: dict) -> dict:
        """Files back to before the prompt of ``user_message_id`` (``/rewind N code``: our checkpoints)."""
        session = self.session
        index = self.prompt_ids.get(str(request.get("user_message_id")))
        numbers = [number for number, entry in enumerate(session.checkpoints.prompts(), 1) if entry.index == index]
        if index is None or not numbers:
            raise ValueError(
                f"no checkpoint for user message {request.get('user_message_id')!r} "
                "(pass --replay-user-messages and use the uuid of a user message of this session)"
            )
        if session.running:
            raise ValueError("a turn is running: interrupt it or wait for its result")
        events = await self.apply(Rewind(numbers[0], "code", confirmed=True))
        restored = [path for event in events if isinstance(event, ev.Rewound) for path in event.restored]
        return {"canRewind": True, "filesChanged": restored}

    async def _on_get_context_usage(self, request: dict) -> dict:
        usage = context_usage(self.session)
        window = usage.window or 1
        return {
            "categories": [{"name": part.name, "tokens": part.tokens, "color": "default"} for part in usage.parts],
            "totalTokens": usage.used,
            "maxTokens": usage.window,
            "rawMaxTokens": self.session.window.tokens,
            "percentage": round(100 * usage.used / window, 2),
            "model": self.session.model,
            "isAutoCompactEnabled": True,
            "memoryFiles": [],
            "mcpTools": [],
            "agents": [],
            "gridRows": [],
        }


def read_message(text: str, images: list) -> Operation:
    """What a user message asks for (the slash commands' parser); as typed when it cannot be read,
    for the command layer to say what is wrong with it."""
    try:
        return read_input(text, images)
    except InputError:
        return UserInput(text, tuple(images))


_MCP_STATUS = {"ready": "connected", "starting": "pending", "failed": "failed", "stopped": "failed"}


def permission_mode_operations(mode: str, prompt_tool: bool, current_mode: str) -> list[Operation]:
    """What ``set_permission_mode`` sets, as the flag sets it at the start: the approval policy
    (the host is asked through can_use_tool unless it bypasses), the sandbox for bypassPermissions,
    edits approved for acceptEdits (withdrawn otherwise), plan mode for plan (agent mode again
    when it leaves plan)."""
    if mode not in PERMISSION_MODES:
        raise ValueError(f"unknown permission mode {mode!r}")
    asks = prompt_tool and mode not in ("bypassPermissions", "dontAsk")
    ops: list[Operation] = [SetApprovalPolicy("untrusted" if asks else "never")]
    if mode == "bypassPermissions":
        ops.append(SetSandbox("danger-full-access"))
    ops.append(ApproveForSession(tools=(EDITS,), withdraw=mode != "acceptEdits"))
    wanted = "plan" if mode == "plan" else ("agent" if current_mode == "plan" else current_mode)
    if wanted != current_mode and wanted in ("agent", "plan"):
        ops.append(SetMode(wanted))
    return ops
