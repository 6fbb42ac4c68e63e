"""What happens to a tool call the model makes, in order. The one place that sequences it.

1. Routing: a call through the request's door (tools/door.py: ``tool_call`` or ``mcp_call``)
   names another tool; every later step sees the tool it names.
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
   new after an edit (``turn.checks``, agent_cli/lsp/).
7. ToolCallEnd, with the permission rule that decided, if one did.

A call that raises fails with words the model reads; the turn goes on. Consecutive read-only
calls (and consecutive ``task`` calls) run concurrently.
"""

from __future__ import annotations

import asyncio
import json
import time
from dataclasses import replace
from typing import Any

from agent_cli import events as ev
from agent_cli.items import ToolCall, ToolOutput
from agent_cli.permissions.engine import Verdict
from agent_cli.session import hook_events, hooks
from agent_cli.session.request_parts import tool_allowed
from agent_cli.session.services import SessionServices
from agent_cli.session.session_state import SessionState
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.base import ToolResult
from agent_cli.tools.door import Door
from agent_cli.tools.failures import failure_result
from agent_cli.tools.registry import ToolRegistry, lenient_arguments, run_tool


async def run_tool_calls(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    door: Door | None,
    calls: list[ToolCall],
    emit: Emit,
) -> None:
    """Run the calls of one response (to a request with ``door``) and record their outputs, batch by batch."""
    routed = [door.route(call) for call in calls] if door is not None else calls  # step 1
    for batch in batches(services.tools, door, routed):
        await services.checkpoints.before_tools(  # /undo can take it back
            [call.name for call in batch if door is None or not door.owns(call.name)], emit
        )
        # A TaskGroup, not gather: when the turn is stopped it waits until every call (a subagent
        # with its own processes too) has stopped, so nothing outlives the turn.
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run_tool_call(turn, state, services, door, call, emit)) for call in batch]
        for task in tasks:
            state.record(task.result())


def batches(tools: ToolRegistry, door: Door | None, calls: list[ToolCall]) -> list[list[ToolCall]]:
    """Consecutive read-only calls (the door's own are) form one batch that runs concurrently, and
    so do consecutive ``task`` calls (subagents, limited by ``max_parallel_agents``); others run alone."""

    def kind(call: ToolCall) -> str | None:
        if tools.is_read_only(call.name) or (door is not None and door.owns(call.name)):
            return "read"
        return "task" if call.name == "task" else None

    groups: list[list[ToolCall]] = []
    for call in calls:
        if kind(call) and groups and all(kind(c) == kind(call) for c in groups[-1]):
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


async def run_tool_call(
    turn: TurnContext, state: SessionState, services: SessionServices, door: Door | None, call: ToolCall, emit: Emit
) -> ToolOutput:
    """Steps 2 to 7 for one call; its output for the history."""
    args = lenient_arguments(call.arguments)
    emit(ev.ToolCallBegin(call.call_id, call.name, args))
    started = time.monotonic()
    approvals = services.approvals
    try:
        if (refusal := await refusal_of(turn, state, services, call, args, emit)) is not None:
            result = ToolResult(refusal, success=False)  # the model reads why
        else:
            started = time.monotonic()  # the duration shown is the tool's, not the wait for approval
            if (updated := approvals.updated_arguments.get(call.call_id)) is not None:
                call, args = replace(call, arguments=json.dumps(updated)), updated  # what the approver allowed
            result = await dispatch(turn, state, services, door, call, args, emit)
            result = await hooks.post_tool_use(turn, state, services, call, args, result, emit)
            if not result.success:
                await hook_events.post_tool_use_failure(turn, state, services, call, args, result.output, emit)
            if result.changes and services.checks is not None:  # what language servers say of the edit
                result = await services.checks.after_edit(call.call_id, result, turn.config.cwd, emit)
    except Exception as exc:  # the file system changing under a patch, a path it refuses: the call
        result = failure_result(call.name, exc)  # fails with words the model reads, the turn goes on
        await hook_events.post_tool_use_failure(turn, state, services, call, args, result.output, emit)
    finally:
        verdict = approvals.end_call(call.call_id)  # a permission rule's part, if any
    emit(end_event(call, args, result, time.monotonic() - started, verdict))
    return ToolOutput(call.call_id, result.output, result.success, images=result.images)


async def refusal_of(
    turn: TurnContext, state: SessionState, services: SessionServices, call: ToolCall, args: dict[str, Any], emit: Emit
) -> str | None:
    """Steps 2 to 4: why the call must not run (the model reads it), or None when it may."""
    tools = services.tools
    if call.name in tools and not tool_allowed(tools, call.name, turn.mode, turn.tool_limit):
        return f"{call.name} is not available in {turn.mode} mode"
    hook = await hooks.pre_tool_use(turn, state, services, call, args, emit)
    if hook.blocked:
        return hook.reason
    # A hook's allow answers the question as the user would have (the sandbox's hard limits and
    # deny rules still apply); its ask forces one.
    return await services.approvals.check(call.call_id, call.name, args, emit, hook.permission)


async def dispatch(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    door: Door | None,
    call: ToolCall,
    args: dict[str, Any],
    emit: Emit,
) -> ToolResult:
    """Step 5: run the approved call with the sandbox the approval step left it (lifted for an
    approved escalation); offer to re-run a shell command that failed in the sandbox outside it."""
    approvals = services.approvals
    own = door.tool(call.name) if door is not None else None  # the door's search, or a call naming nothing

    async def run() -> ToolResult:
        context = services.tool_context(turn.config, state.meter.tool_output_limit, call.call_id, emit)
        return await (run_tool(own, call, context) if own is not None else services.tools.dispatch(call, context))

    try:
        result = await run()
        if call.name == "shell" and await approvals.offer_rerun(call.call_id, args, result, emit):
            result = await run()  # outside the sandbox now: a new context for the call
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
