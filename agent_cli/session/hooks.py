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
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.context.fragments import HOOK_CONTEXT
from agent_cli.hooks.spec import HookSpec, HookTable, hook_calls, parse_hooks
from agent_cli.items import ToolCall, user
from agent_cli.tools.base import ToolResult
from agent_cli.tools.process import communicate_or_kill
from agent_cli.tools.sandbox import supervised_argv

if TYPE_CHECKING:
    from agent_cli.session.session import Emit, Session

BLOCK_EXIT_CODE = 2
MAX_STOP_BLOCKS = 3  # consecutive Stop blocks in one turn before the agent stops anyway
OUTPUT_LIMIT = 20_000  # characters of a hook's stdout/stderr that are used
PERMISSIONS = ("allow", "deny", "ask")
STRICTNESS = {"allow": 0, "ask": 1, "deny": 2}


def hook_context_text(event: str, body: str) -> str:
    return f'{HOOK_CONTEXT.start}{event}">\n{body.strip()}\n{HOOK_CONTEXT.end}'


@dataclass
class HookState:
    """The session's hooks and what they still have to do."""

    table: HookTable = field(default_factory=dict)
    pending_start: str | None = "startup"  # SessionStart source to run before the next prompt
    queued_context: list[str] = field(default_factory=list)  # fragments waiting for a safe point
    stop_blocks: int = 0  # consecutive Stop blocks in the current turn

    @classmethod
    def from_config(cls, config: Config, plugin_hooks: Iterable[HookSpec] = (), raw: dict | None = None) -> HookState:
        """The config's hooks (``raw``: the tables an untrusted folder may use), then the plugins'."""
        table = parse_hooks((config.raw if raw is None else raw).get("hooks"), "config")
        for spec in plugin_hooks:
            table[spec.event] = (*table.get(spec.event, ()), spec)
        return cls(table)


@dataclass(frozen=True, slots=True)
class HookRun:
    """One hook process and how it ended."""

    spec: HookSpec
    exit_code: int | None
    stdout: str = ""
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None  # it could not be started


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


async def run_hooks(session: Session, event: str, emit: Emit, **fields: Any) -> HookOutcome:
    """Run the hooks of ``event`` that match, report problems and messages, return the verdict.

    ``fields`` are the event's own payload fields (``tool_name``, ``tool_input``, ``prompt``,
    ``source``, ``trigger``...). With no matching hook this returns at once.
    """
    cwd = Path(session.config.cwd)
    calls = hook_calls(session.hooks.table, event, fields, cwd)
    if not calls:
        return HookOutcome()
    common = {
        "session_id": session.id,
        "transcript_path": str(session.rollout.path),
        "cwd": str(cwd),
        "hook_event_name": event,
    }
    if session.subagent is not None:  # a hook can tell a subagent's calls from the session's own
        common["agent"] = session.subagent.name
    runs = await asyncio.gather(
        *(
            execute(spec, json.dumps({**common, **own}).encode("utf-8"), cwd, session.approvals.env)
            for spec, own in calls
        )
    )
    outcome = HookOutcome(runs=list(runs))
    for run in runs:
        interpret(run, outcome, emit)
    return outcome


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
    event, name = run.spec.event, f"{run.spec.event} hook `{short_command(run.spec.command)}`"
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


# --- the points where the session calls hooks ----------------------------------------------


def queue_context(session: Session, event: str, context: list[str]) -> None:
    session.hooks.queued_context.extend(hook_context_text(event, text) for text in context)


def flush_hook_context(session: Session) -> None:
    """Record queued hook context. Called before each model request, where no call is open."""
    queued, session.hooks.queued_context = session.hooks.queued_context, []
    for text in queued:
        session.record(user(text))


async def run_session_start(session: Session, source: str, emit: Emit) -> HookOutcome:
    """SessionStart (source: startup, resume or compact). Its context joins the next request."""
    outcome = await run_hooks(session, "SessionStart", emit, source=source)
    if outcome.blocked:  # SessionStart cannot block; show why it tried
        emit(ev.Warning(f"SessionStart hook: {outcome.reason}"))
    queue_context(session, "SessionStart", outcome.context)
    return outcome


async def before_prompt(session: Session, text: str, emit: Emit) -> bool:
    """SessionStart (once, if pending), then UserPromptSubmit. False when the prompt is dropped."""
    state = session.hooks
    state.stop_blocks = 0
    if state.pending_start is not None:
        source, state.pending_start = state.pending_start, None
        await run_session_start(session, source, emit)
        flush_hook_context(session)  # before the prompt: the session's context comes first
    outcome = await run_hooks(session, "UserPromptSubmit", emit, prompt=text)
    if outcome.blocked:
        emit(ev.Warning(f"Your prompt was blocked by a UserPromptSubmit hook and not sent: {outcome.reason}"))
        emit(ev.TurnAborted("prompt blocked by a UserPromptSubmit hook"))
        return False
    queue_context(session, "UserPromptSubmit", outcome.context)
    return True


async def pre_tool_use(session: Session, call: ToolCall, args: dict[str, Any], emit: Emit) -> HookOutcome:
    """PreToolUse. ``blocked`` means: do not run, ``reason`` is the tool's output."""
    outcome = await run_hooks(
        session, "PreToolUse", emit, tool_name=call.name, tool_input=args, tool_use_id=call.call_id
    )
    if outcome.blocked:
        outcome.reasons.insert(0, f"{call.name} was not run: a PreToolUse hook blocked it.")
    queue_context(session, "PreToolUse", outcome.context)
    return outcome


async def post_tool_use(
    session: Session, call: ToolCall, args: dict[str, Any], result: ToolResult, emit: Emit
) -> ToolResult:
    """PostToolUse. The tool already ran; a block adds the hook's reason to what the model reads."""
    response = {"output": result.output, "success": result.success, "exit_code": result.exit_code}
    outcome = await run_hooks(
        session,
        "PostToolUse",
        emit,
        tool_name=call.name,
        tool_input=args,
        tool_response=response,
        tool_use_id=call.call_id,
    )
    queue_context(session, "PostToolUse", outcome.context)
    if not outcome.blocked:
        return result
    output = f"{result.output}\n\nPostToolUse hook feedback: {outcome.reason}"
    return replace(result, output=output)


async def stop_blocked(session: Session, emit: Emit, last_message: str | None = None) -> bool:
    """Stop. True when a hook keeps the agent working (its reason was added to the context)."""
    state = session.hooks
    if not state.table.get("Stop"):
        return False
    outcome = await run_hooks(
        session, "Stop", emit, stop_hook_active=state.stop_blocks > 0, last_assistant_message=last_message
    )
    queue_context(session, "Stop", outcome.context)
    if not outcome.blocked:
        return False
    if state.stop_blocks >= MAX_STOP_BLOCKS:
        emit(
            ev.Warning(
                f"A Stop hook blocked stopping {MAX_STOP_BLOCKS} times in a row; the agent stops anyway. "
                f"Last reason: {outcome.reason}"
            )
        )
        return False
    state.stop_blocks += 1
    emit(ev.Notice(f"A Stop hook asked the agent to keep working: {outcome.reason}", title="Stop hook"))
    state.queued_context.append(hook_context_text("Stop", f"Do not stop yet. {outcome.reason}"))
    return True


async def run_pre_compact(session: Session, trigger: str, emit: Emit, custom_instructions: str = "") -> HookOutcome:
    """PreCompact (trigger: manual or auto; an overflow counts as auto). It cannot block."""
    trigger = "manual" if trigger == "manual" else "auto"
    outcome = await run_hooks(session, "PreCompact", emit, trigger=trigger, custom_instructions=custom_instructions)
    if outcome.blocked:
        emit(ev.Warning(f"PreCompact hook: {outcome.reason}"))
    queue_context(session, "PreCompact", outcome.context)
    return outcome
