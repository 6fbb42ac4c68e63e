"""Run an approved tool call under the sandbox; offer to re-run a failed command outside it.

The approval step (``session.approvals.check``) has already run: it may have lifted the sandbox
for this call (an approved escalation). Here the call runs with the context the policy gives
it, and under ``on-failure``/``untrusted`` a shell command that failed in the sandbox may run
once more without it if the user agrees.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from agent_cli.items import ToolCall
from agent_cli.tools.base import ToolResult

if TYPE_CHECKING:
    from agent_cli.session.session import Emit, Session


async def dispatch_guarded(session: Session, call: ToolCall, args: dict, emit: Emit) -> ToolResult:
    approvals = session.approvals
    try:
        result = await session.tools.dispatch(call, session.tool_context(call.call_id, emit))
        if call.name == "shell" and await approvals.offer_rerun(call.call_id, args, result, emit):
            result = await session.tools.dispatch(call, session.tool_context(call.call_id, emit))
        if hint := approvals.failure_hint(call.call_id, call.name, result):
            result = replace(result, output=f"{result.output}\n{hint}")
        return result
    finally:
        approvals.forget(call.call_id)
