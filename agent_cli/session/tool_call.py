"""What happens to a tool call the model makes, in order. The one place that sequences it.

1. Routing: the lean profile's ``tool_call`` and MCP search mode's ``mcp_call`` name another
   tool; every later step sees the tool they name.
2. Mode: a tool the mode (or a command's tool limit, /review) leaves out is refused.
3. PreToolUse hooks (``hooks.py`` runs them): a block refuses the call, the model reads why;
   their allow / ask / deny goes to the next step.
4. Permission rules and the approval policy (``approvals.py`` decides): a deny rule wins, a
   hook's ask forces the question, a hook's or rule's allow answers it, an ask rule asks, then
   the policy; the user may be asked. An approved escalation lifts the sandbox for this call.
5. Dispatch (``tools/registry.py``) under the sandbox. Under ``on-failure`` / ``untrusted`` a
   shell command that failed in the sandbox may run once more outside it if the user agrees;
   under ``on-request`` the model reads how to ask for the escalation.
6. PostToolUse hooks: their feedback is added to what the model reads; after a failure,
   PostToolUseFailure hooks too (``hook_events.py``); so is what the language servers report
   new after an edit (``session.checks``, agent_cli/lsp/).
7. ToolCallEnd, with the permission rule that decided, if one did.

A call that raises fails with words the model reads; the turn goes on. Consecutive read-only
calls (and consecutive ``task`` calls) run concurrently.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from agent_cli import events as ev
from agent_cli.context.profile import TOOL_CALL
from agent_cli.items import ToolCall, ToolOutput
from agent_cli.permissions.engine import Verdict
from agent_cli.session import hook_events, hooks
from agent_cli.tools.base import ToolError, ToolResult
from agent_cli.tools.failures import failure_result
from agent_cli.tools.registry import parse_arguments

if TYPE_CHECKING:
    from agent_cli.session.session import Emit, Session


async def run_tool_calls(session: Session, calls: list[ToolCall], emit: Emit) -> None:
    """Run the calls of one response and record their outputs, batch by batch."""
    for batch in batches(session, routed(session, calls)):
        await session.checkpoints.before_tools([call.name for call in batch], emit)  # /undo can take it back
        # A TaskGroup, not gather: when the turn is stopped it waits until every call (a subagent
        # with its own processes too) has stopped, so nothing outlives the turn.
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run_tool_call(session, call, emit)) for call in batch]
        for task in tasks:
            session.record(task.result())


def routed(session: Session, calls: list[ToolCall]) -> list[ToolCall]:
    """Step 1: a call through a door tool becomes a call of the tool it names."""
    if session.lean and (door := session.tools.get(TOOL_CALL)) is not None:  # lean profile (context/profile.py)
        calls = [door.route(call) for call in calls]
    if (router := session.tools.get("mcp_call")) is not None:  # MCP search mode (mcp/search.py)
        calls = [router.route(call) for call in calls]
    return calls


def batches(session: Session, calls: list[ToolCall]) -> list[list[ToolCall]]:
    """Consecutive read-only calls form one batch that runs concurrently, and so do consecutive
    ``task`` calls (subagents, limited by ``max_parallel_agents``); others run alone."""

    def kind(call: ToolCall) -> str | None:
        return "read" if session.tools.is_read_only(call.name) else "task" if call.name == "task" else None

    groups: list[list[ToolCall]] = []
    for call in calls:
        if kind(call) and groups and all(kind(c) == kind(call) for c in groups[-1]):
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


async def run_tool_call(session: Session, call: ToolCall, emit: Emit) -> ToolOutput:
    """Steps 2 to 7 for one call; its output for the history."""
    args = lenient_arguments(call.arguments)
    emit(ev.ToolCallBegin(call.call_id, call.name, args))
    started = time.monotonic()
    try:
        if (refusal := await refusal_of(session, call, args, emit)) is not None:
            result = ToolResult(refusal, success=False)  # the model reads why
        else:
            started = time.monotonic()  # the duration shown is the tool's, not the wait for approval
            if (updated := session.approvals.updated_arguments.get(call.call_id)) is not None:
                call, args = replace(call, arguments=json.dumps(updated)), updated  # what the approver allowed
            result = await dispatch(session, call, args, emit)
            result = await hooks.post_tool_use(session, call, args, result, emit)
            if not result.success:
                await hook_events.post_tool_use_failure(session, call, args, result.output, emit)
            if result.changes and session.checks is not None:  # what language servers say of the edit
                result = await session.checks.after_edit(call.call_id, result, session.config.cwd, emit)
    except Exception as exc:  # the file system changing under a patch, a path it refuses: the call
        result = failure_result(call.name, exc)  # fails with words the model reads, the turn goes on
        await hook_events.post_tool_use_failure(session, call, args, result.output, emit)
    finally:
        verdict = session.approvals.end_call(call.call_id)  # a permission rule's part, if any
    emit(end_event(call, args, result, time.monotonic() - started, verdict))
    return ToolOutput(call.call_id, result.output, result.success, images=result.images)


async def refusal_of(session: Session, call: ToolCall, args: dict[str, Any], emit: Emit) -> str | None:
    """Steps 2 to 4: why the call must not run (the model reads it), or None when it may."""
    if call.name in session.tools and not session.tool_allowed(call.name):
        return f"{call.name} is not available in {session.mode} mode"
    hook = await hooks.pre_tool_use(session, call, args, emit)
    if hook.blocked:
        return hook.reason
    # A hook's allow answers the question as the user would have (the sandbox's hard limits and
    # deny rules still apply); its ask forces one.
    return await session.approvals.check(call.call_id, call.name, args, emit, hook.permission)


async def dispatch(session: Session, call: ToolCall, args: dict[str, Any], emit: Emit) -> ToolResult:
    """Step 5: run the approved call with the sandbox the approval step left it (lifted for an
    approved escalation); offer to re-run a shell command that failed in the sandbox outside it."""
    approvals = session.approvals
    try:
        result = await session.tools.dispatch(call, session.tool_context(call.call_id, emit))
        if call.name == "shell" and await approvals.offer_rerun(call.call_id, args, result, emit):
            result = await session.tools.dispatch(call, session.tool_context(call.call_id, emit))
        if hint := approvals.failure_hint(call.call_id, call.name, result):
            result = replace(result, output=f"{result.output}\n{hint}")
        return result
    finally:
        approvals.forget(call.call_id)  # a lifted sandbox is for this call only


def end_event(
    call: ToolCall, args: dict[str, Any], result: ToolResult, duration: float, verdict: Verdict | None
) -> ev.ToolCallEnd:
    return ev.ToolCallEnd(
        call.call_id,
        call.name,
        args,
        result.output,
        result.success,
        duration,
        result.exit_code,
        result.changes,
        verdict.decision if verdict else None,
        tuple((rule.text, rule.source) for rule in verdict.rules) if verdict else (),
    )


def lenient_arguments(raw: str) -> dict[str, Any]:
    """Arguments for display; malformed JSON is shown raw (dispatch reports the error)."""
    try:
        return parse_arguments(raw)
    except ToolError:
        return {"raw": raw}
