"""Hooks: the user's own commands, run at fixed points of a session (config: ``[[hooks.<Event>]]``).

Each matching hook runs in the session's cwd with a JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``hook_event_name`` and the event's own fields); hooks of one
event run concurrently and are killed at their timeout. What the exit code means:

- 2 blocks: PreToolUse does not run the tool (the model reads stderr as the result), Stop keeps
  the agent working (stderr is the reason), UserPromptSubmit drops the prompt (stderr is shown).
- 0 may print a JSON object: ``decision: "block"`` + ``reason`` (blocks, as exit 2),
  ``systemMessage`` (shown to the user), ``hookSpecificOutput.additionalContext`` (a fragment
  added to the model's context), and for PreToolUse ``permissionDecision`` allow | deny | ask.
  Plain text from SessionStart and UserPromptSubmit hooks is added as context too.
- anything else, a timeout or invalid JSON is an error shown to the user; nothing is blocked.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.context.fragments import HOOK_CONTEXT
from agent_cli.hooks.run import HookRun
from agent_cli.hooks.spec import HookSpec, hook_calls
from agent_cli.items import ToolCall, user
from agent_cli.sandbox.policy import supervised_argv
from agent_cli.session import hook_kinds
from agent_cli.session.approvals import Approvals
from agent_cli.session.hook_state import HookState
from agent_cli.session.services import SessionServices
from agent_cli.session.session_state import SessionState
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.base import ToolResult
from agent_cli.tools.process import communicate_or_kill

BLOCK_EXIT_CODE = 2
MAX_STOP_BLOCKS = 3  # consecutive Stop blocks in one turn before the agent stops anyway
OUTPUT_LIMIT = 20_000  # characters of a hook's stdout/stderr that are used
PERMISSIONS = ("allow", "deny", "ask")
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


def hook_context_text(event: str, body: str) -> str:
    return f'{HOOK_CONTEXT.start}{event}">\n{body.strip()}\n{HOOK_CONTEXT.end}'


@dataclass
class HookOutcome:
    """The combined verdict of every hook of one event."""

    blocked: bool = False
    reasons: list[str] = field(default_factory=list)
    context: list[str] = field(default_factory=list)
    permission: str | None = None  # PreToolUse: allow | deny | ask (deny also sets blocked)
    runs: list[HookRun] = field(default_factory=list)

    @property
    def reason(self) -> str:
        return "\n".join(reason for reason in self.reasons if reason)


# --- running -------------------------------------------------------------------------------


async def run_hooks(
    turn: TurnContext, state: SessionState, services: SessionServices, event: str, emit: Emit, **fields: Any
) -> HookOutcome:
    """Run the hooks of ``event`` that match, report problems and messages, return the verdict.

    ``fields`` are the event's own payload fields (``tool_name``, ``tool_input``, ``prompt``,
    ``source``, ``trigger``...). With no matching hook this returns at once.
    """
    cwd = Path(turn.config.cwd)
    calls = hook_calls(state.hooks.table, event, fields, cwd)
    if not calls:
        return HookOutcome()
    common = {
        "session_id": turn.session_id,
        "transcript_path": str(services.rollout.path),
        "cwd": str(cwd),
        "hook_event_name": event,
        "permission_mode": permission_mode(turn.mode, services.approvals),
    }
    if turn.agent_name is not None:  # a hook can tell a subagent's calls from the session's own
        common["agent"] = turn.agent_name
    for spec, own in [(spec, own) for spec, own in calls if spec.background]:
        start_background(turn, state, services, spec, {**common, **own}, cwd, emit)
    calls = [(spec, own) for spec, own in calls if not spec.background]
    runs = await asyncio.gather(*(run_one(turn, state, services, spec, {**common, **own}, cwd) for spec, own in calls))
    outcome = HookOutcome(runs=list(runs))
    for run in runs:
        interpret(run, outcome, emit)
    return outcome


def start_background(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    spec: HookSpec,
    payload: dict[str, Any],
    cwd: Path,
    emit: Emit,
) -> None:
    """An ``async`` hook: nothing waits for it and it decides nothing; its problems and messages are
    shown. It ends with the session (SessionEnd waits for it)."""

    async def run() -> None:
        interpret(await run_one(turn, state, services, spec, payload, cwd), HookOutcome(), emit)

    state.hooks.keep(run())


def permission_mode(mode: str, approvals: Approvals) -> str:
    """Claude Code's name for how freely tools run here: plan, bypassPermissions or default."""
    if mode == "plan":
        return "plan"
    if approvals.policy == "never" and not approvals.confined:
        return "bypassPermissions"
    return "default"


async def run_one(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    spec: HookSpec,
    payload: dict[str, Any],
    cwd: Path,
) -> HookRun:
    """One hook of any type: a command, an http POST or a prompt to a small model."""
    if spec.kind == "http":
        return await hook_kinds.post(spec, payload, services.approvals.env)
    if spec.kind == "prompt":
        return await hook_kinds.ask_model(turn, state.meter, services.clients, spec, payload)
    return await execute(spec, json.dumps(payload).encode("utf-8"), cwd, services.approvals.env)


async def execute(spec: HookSpec, stdin: bytes, cwd: Path, base_env: Mapping[str, str] | None = None) -> HookRun:
    """Run one hook command; kill its whole process group at the timeout or on cancellation.

    ``base_env`` is the session's scrubbed environment (``[shell_environment_policy]``), the one
    commands and MCP servers get: a hook sees no provider key or token it was not given."""
    if spec.runner is not None:
        return await run_in_host(spec, stdin)
    base = os.environ if base_env is None else base_env
    env = {**base, "AGENT_PROJECT_DIR": str(cwd), "AGENT_HOOK_EVENT": spec.event, **dict(spec.env)}
    try:
        proc = await asyncio.create_subprocess_exec(
            *supervised_argv(["/bin/sh", "-c", spec.command]),  # ends with the agent, leaves nothing running
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own process group, so a timeout kills its children too
        )
    except OSError as exc:
        return HookRun(spec, None, error=exc.strerror or str(exc))
    try:
        out, err = await communicate_or_kill(proc, spec.timeout, stdin)  # killed also when the turn is stopped
    except TimeoutError:
        return HookRun(spec, None, timed_out=True)
    return HookRun(spec, proc.returncode, _text(out), _text(err))


async def run_in_host(spec: HookSpec, stdin: bytes) -> HookRun:
    """A hook the host program runs (an SDK's callback), under the same timeout as a command."""
    try:
        code, out, err = await asyncio.wait_for(spec.runner(stdin), spec.timeout)  # type: ignore[misc]
    except TimeoutError:
        return HookRun(spec, None, timed_out=True)
    except Exception as exc:  # the host could not answer: an error shown to the user, nothing blocked
        return HookRun(spec, None, error=str(exc) or type(exc).__name__)
    return HookRun(spec, code, _text(out.encode("utf-8")), _text(err.encode("utf-8")))


def short_command(command: str, limit: int = 60) -> str:
    """The command as named in messages: its first line, cut to ``limit`` characters."""
    lines = command.strip().splitlines() or [""]
    first = lines[0]
    if len(first) > limit or len(lines) > 1:
        return first[: limit - 1] + "…"
    return first


def _text(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    if len(text) > OUTPUT_LIMIT:
        text = text[:OUTPUT_LIMIT] + f"\n…{len(text) - OUTPUT_LIMIT} characters cut…"
    return text


# --- what a hook said ----------------------------------------------------------------------


def interpret(run: HookRun, outcome: HookOutcome, emit: Emit) -> None:
    """Fold one run into ``outcome``; tell the user about errors and system messages."""
    event, name = run.spec.event, f"{run.spec.event} hook `{short_command(run.spec.label)}`"
    if run.error is not None:
        emit(ev.Warning(f"{name} could not be started: {run.error}"))
        return
    if run.timed_out:
        emit(ev.Warning(f"{name} timed out after {run.spec.timeout:g}s and was stopped"))
        return
    stderr = run.stderr.strip()
    if run.exit_code == BLOCK_EXIT_CODE:
        outcome.blocked = True
        outcome.reasons.append(stderr or f"blocked by {name} (it gave no reason on stderr)")
        return
    if run.exit_code != 0:
        detail = f": {stderr}" if stderr else ""
        emit(ev.Warning(f"{name} failed with exit code {run.exit_code}{detail}"))
        return
    stdout = run.stdout.strip()
    if not stdout:
        return
    if not stdout.startswith("{"):
        if event in ("SessionStart", "UserPromptSubmit"):
            outcome.context.append(stdout)
        return
    try:
        reply = json.loads(stdout)
        if not isinstance(reply, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        emit(ev.Warning(f"{name} printed invalid JSON ({exc}); its output was ignored"))
        return
    apply_reply(reply, outcome, emit, event, name)


def apply_reply(reply: dict[str, Any], outcome: HookOutcome, emit: Emit, event: str, name: str) -> None:
    """What a hook's JSON reply asks for (exit code 0)."""
    message = reply.get("systemMessage")
    if isinstance(message, str) and message.strip():
        emit(ev.Notice(message.strip(), title=f"{event} hook"))
    specific = reply.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    context = specific.get("additionalContext", reply.get("additionalContext"))
    if isinstance(context, str) and context.strip():
        outcome.context.append(context.strip())
    reason = reply.get("reason")
    reason = reason.strip() if isinstance(reason, str) else ""
    if isinstance(specific.get("decision"), dict):  # PermissionRequest answers for the user
        permission_answer(specific["decision"], outcome, emit, name)
        return
    if reply.get("decision") == "block":
        outcome.blocked = True
        outcome.reasons.append(reason or f"blocked by {name}")
    decision = specific.get("permissionDecision", reply.get("permissionDecision"))
    if decision is None and reply.get("decision") == "approve":  # the older spelling of allow
        decision = "allow"
    if decision is None:
        return
    if decision not in PERMISSIONS:
        emit(ev.Warning(f"{name} returned an unknown permissionDecision {decision!r}; expected allow, deny or ask"))
        return
    detail = specific.get("permissionDecisionReason", reason)
    detail = detail.strip() if isinstance(detail, str) else ""
    if decision == "deny":
        outcome.blocked = True
        outcome.reasons.append(detail or f"denied by {name}")
    # The strictest answer of all the hooks wins: deny > ask > allow.
    if outcome.permission is None or STRICTNESS[decision] > STRICTNESS[outcome.permission]:
        outcome.permission = decision


def permission_answer(decision: dict[str, Any], outcome: HookOutcome, emit: Emit, name: str) -> None:
    """A PermissionRequest hook's ``{"behavior": "allow" | "deny", "message": ...}``; deny wins."""
    behavior, message = decision.get("behavior"), decision.get("message")
    message = message.strip() if isinstance(message, str) else ""
    if behavior == "deny":
        outcome.blocked = True
        outcome.reasons.append(message or f"denied by {name}")
        outcome.permission = "deny"
    elif behavior == "allow":
        outcome.permission = outcome.permission or "allow"
    else:
        emit(ev.Warning(f"{name} returned an unknown decision behavior {behavior!r}; expected allow or deny"))


# --- the points where the session calls hooks ----------------------------------------------


def queue_context(hooks: HookState, event: str, context: list[str]) -> None:
    hooks.queued_context.extend(hook_context_text(event, text) for text in context)


def flush_hook_context(state: SessionState) -> None:
    """Record queued hook context. Called before each model request, where no call is open."""
    queued, state.hooks.queued_context = state.hooks.queued_context, []
    for text in queued:
        state.record(user(text))


async def run_session_start(
    turn: TurnContext, state: SessionState, services: SessionServices, source: str, emit: Emit
) -> HookOutcome:
    """SessionStart (source: startup, resume or compact). Its context joins the next request."""
    outcome = await run_hooks(turn, state, services, "SessionStart", emit, source=source)
    if outcome.blocked:  # SessionStart cannot block; show why it tried
        emit(ev.Warning(f"SessionStart hook: {outcome.reason}"))
    queue_context(state.hooks, "SessionStart", outcome.context)
    return outcome


async def before_prompt(
    turn: TurnContext, state: SessionState, services: SessionServices, text: str, emit: Emit
) -> bool:
    """SessionStart (once, if pending), then UserPromptSubmit. False when the prompt is dropped."""
    hooks = state.hooks
    hooks.stop_blocks = 0
    if hooks.pending_start is not None:
        source, hooks.pending_start = hooks.pending_start, None
        await run_session_start(turn, state, services, source, emit)
        flush_hook_context(state)  # before the prompt: the session's context comes first
    outcome = await run_hooks(turn, state, services, "UserPromptSubmit", emit, prompt=text)
    if outcome.blocked:
        emit(ev.Warning(f"Your prompt was blocked by a UserPromptSubmit hook and not sent: {outcome.reason}"))
        emit(ev.TurnAborted("prompt blocked by a UserPromptSubmit hook"))
        return False
    queue_context(hooks, "UserPromptSubmit", outcome.context)
    return True


async def pre_tool_use(
    turn: TurnContext, state: SessionState, services: SessionServices, call: ToolCall, args: dict[str, Any], emit: Emit
) -> HookOutcome:
    """PreToolUse. ``blocked`` means: do not run, ``reason`` is the tool's output."""
    outcome = await run_hooks(
        turn, state, services, "PreToolUse", emit, tool_name=call.name, tool_input=args, tool_use_id=call.call_id
    )
    if outcome.blocked:
        outcome.reasons.insert(0, f"{call.name} was not run: a PreToolUse hook blocked it.")
    queue_context(state.hooks, "PreToolUse", outcome.context)
    return outcome


async def post_tool_use(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    call: ToolCall,
    args: dict[str, Any],
    result: ToolResult,
    emit: Emit,
) -> ToolResult:
    """PostToolUse. The tool already ran; a block adds the hook's reason to what the model reads."""
    response = {"output": result.output, "success": result.success, "exit_code": result.exit_code}
    outcome = await run_hooks(
        turn,
        state,
        services,
        "PostToolUse",
        emit,
        tool_name=call.name,
        tool_input=args,
        tool_response=response,
        tool_use_id=call.call_id,
    )
    queue_context(state.hooks, "PostToolUse", outcome.context)
    if not outcome.blocked:
        return result
    output = f"{result.output}\n\nPostToolUse hook feedback: {outcome.reason}"
    return replace(result, output=output)


async def stop_blocked(
    turn: TurnContext, state: SessionState, services: SessionServices, emit: Emit, last_message: str | None = None
) -> bool:
    """Stop. True when a hook keeps the agent working (its reason was added to the context)."""
    hooks = state.hooks
    if not hooks.table.get("Stop"):
        return False
    outcome = await run_hooks(
        turn, state, services, "Stop", emit, stop_hook_active=hooks.stop_blocks > 0, last_assistant_message=last_message
    )
    queue_context(hooks, "Stop", outcome.context)
    if not outcome.blocked:
        return False
    if hooks.stop_blocks >= MAX_STOP_BLOCKS:
        emit(
            ev.Warning(
                f"A Stop hook blocked stopping {MAX_STOP_BLOCKS} times in a row; the agent stops anyway. "
                f"Last reason: {outcome.reason}"
            )
        )
        return False
    hooks.stop_blocks += 1
    emit(ev.Notice(f"A Stop hook asked the agent to keep working: {outcome.reason}", title="Stop hook"))
    hooks.queued_context.append(hook_context_text("Stop", f"Do not stop yet. {outcome.reason}"))
    return True


async def run_pre_compact(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    trigger: str,
    emit: Emit,
    custom_instructions: str = "",
) -> HookOutcome:
    """PreCompact (trigger: manual or auto; an overflow counts as auto). It cannot block."""
    trigger = "manual" if trigger == "manual" else "auto"
    outcome = await run_hooks(
        turn, state, services, "PreCompact", emit, trigger=trigger, custom_instructions=custom_instructions
    )
    if outcome.blocked:
        emit(ev.Warning(f"PreCompact hook: {outcome.reason}"))
    queue_context(state.hooks, "PreCompact", outcome.context)
    return outcome
