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
from agent_cli.context.profile import TOOL_CALL
from agent_cli.items import ToolCall, ToolOutput
from agent_cli.permissions.engine import Verdict
from agent_cli.session import hook_events, hooks
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.base import ToolResult
from agent_cli.tools.door import DoorCall
from agent_cli.tools.failures import failure_result
from agent_cli.tools.mcp_names import CALL_TOOL as MCP_CALL_TOOL
from agent_cli.tools.registry import lenient_arguments


async def run_tool_calls(turn: TurnContext, calls: list[ToolCall], emit: Emit) -> None:
    """Run the calls of one response and record their outputs, batch by batch."""
    for batch in batches(turn, routed(turn, calls)):
        await turn.checkpoints.before_tools([call.name for call in batch], emit)  # /undo can take it back
        # A TaskGroup, not gather: when the turn is stopped it waits until every call (a subagent
        # with its own processes too) has stopped, so nothing outlives the turn.
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(run_tool_call(turn, call, emit)) for call in batch]
        for task in tasks:
            turn.record(task.result())


def routed(turn: TurnContext, calls: list[ToolCall]) -> list[ToolCall]:
    """Step 1: a call through a door (tools/door.py) becomes a call of the tool it names: the lean
    profile's ``tool_call`` (while the profile applies), then MCP search mode's ``mcp_call``."""
    for name in (TOOL_CALL, MCP_CALL_TOOL):
        door = turn.tools.get(name)
        if isinstance(door, DoorCall) and (name != TOOL_CALL or turn.state.lean):
            calls = [door.route(call) for call in calls]
    return calls


def batches(turn: TurnContext, calls: list[ToolCall]) -> list[list[ToolCall]]:
    """Consecutive read-only calls form one batch that runs concurrently, and so do consecutive
    ``task`` calls (subagents, limited by ``max_parallel_agents``); others run alone."""

    def kind(call: ToolCall) -> str | None:
        return "read" if turn.tools.is_read_only(call.name) else "task" if call.name == "task" else None

    groups: list[list[ToolCall]] = []
    for call in calls:
        if kind(call) and groups and all(kind(c) == kind(call) for c in groups[-1]):
            groups[-1].append(call)
        else:
            groups.append([call])
    return groups


async def run_tool_call(turn: TurnContext, call: ToolCall, emit: Emit) -> ToolOutput:
    """Steps 2 to 7 for one call; its output for the history."""
    args = lenient_arguments(call.arguments)
    emit(ev.ToolCallBegin(call.call_id, call.name, args))
    started = time.monotonic()
    try:
        if (refusal := await refusal_of(turn, call, args, emit)) is not None:
            result = ToolResult(refusal, success=False)  # the model reads why
        else:
            started = time.monotonic()  # the duration shown is the tool's, not the wait for approval
            if (updated := turn.approvals.updated_arguments.get(call.call_id)) is not None:
                call, args = replace(call, arguments=json.dumps(updated)), updated  # what the approver allowed
            result = await dispatch(turn, call, args, emit)
            result = await hooks.post_tool_use(turn, call, args, result, emit)
            if not result.success:
                await hook_events.post_tool_use_failure(turn, call, args, result.output, emit)
            if result.changes and turn.checks is not None:  # what language servers say of the edit
                result = await turn.checks.after_edit(call.call_id, result, turn.config.cwd, emit)
    except Exception as exc:  # the file system changing under a patch, a path it refuses: the call
        result = failure_result(call.name, exc)  # fails with words the model reads, the turn goes on
        await hook_events.post_tool_use_failure(turn, call, args, result.output, emit)
    finally:
        verdict = turn.approvals.end_call(call.call_id)  # a permission rule's part, if any
    emit(end_event(call, args, result, time.monotonic() - started, verdict))
    return ToolOutput(call.call_id, result.output, result.success, images=result.images)


async def refusal_of(turn: TurnContext, call: ToolCall, args: dict[str, Any], emit: Emit) -> str | None:
    """Steps 2 to 4: why the call must not run (the model reads it), or None when it may."""
    if call.name in turn.tools and not turn.state.tool_allowed(call.name):
        return f"{call.name} is not available in {turn.mode} mode"
    hook = await hooks.pre_tool_use(turn, call, args, emit)
    if hook.blocked:
        return hook.reason
    # A hook's allow answers the question as the user would have (the sandbox's hard limits and
    # deny rules still apply); its ask forces one.
    return await turn.approvals.check(call.call_id, call.name, args, emit, hook.permission)


async def dispatch(turn: TurnContext, call: ToolCall, args: dict[str, Any], emit: Emit) -> ToolResult:
    """Step 5: run the approved call with the sandbox the approval step left it (lifted for an
    approved escalation); offer to re-run a shell command that failed in the sandbox outside it."""
    approvals = turn.approvals
    try:
        result = await turn.tools.dispatch(call, turn.state.tool_context(call.call_id, emit))
        if call.name == "shell" and await approvals.offer_rerun(call.call_id, args, result, emit):
            result = await turn.tools.dispatch(call, turn.state.tool_context(call.call_id, emit))
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
