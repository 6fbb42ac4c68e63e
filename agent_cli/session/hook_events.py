"""The hook events besides the turn's own (``hooks.py``): SessionEnd, Notification,
PermissionRequest, PostToolUseFailure and SubagentStart, with Claude Code's input fields.

- ``SessionEnd`` (``reason``: clear, logout, prompt_input_exit, other) runs once when the
  session closes; nothing it says can stop that, and nothing it says is shown (the front end is
  closing too), as in Claude Code. A session closed before its first prompt ran no SessionStart
  (that waits for the prompt), so it runs no SessionEnd either: the two always come in pairs.
- ``Notification`` (``notification_type``, ``message``, ``title``): an approval is waiting
  (``permission_prompt``) or the prompt has been idle for 60 s (``idle_prompt``). It runs beside
  the question, never in front of it.
- ``PermissionRequest`` (``tool_name``, ``tool_input``, ``permission_suggestions``): just before
  the user would be asked; ``hookSpecificOutput.decision.behavior`` allow or deny answers for them.
- ``PostToolUseFailure`` (``tool_name``, ``tool_input``, ``tool_use_id``, ``error``,
  ``is_interrupt``): after a call failed (PostToolUse ran too if the tool itself ran).
- ``SubagentStart`` (``agent_id``, ``agent_type``): before a subagent's first request; its
  additional context joins the subagent's context.
"""

from __future__ import annotations

import asyncio
from typing import Any

from agent_cli import events as ev
from agent_cli.items import ToolCall
from agent_cli.session.hook_state import HookState
from agent_cli.session.hooks import queue_context, run_hooks
from agent_cli.session.safe_commands import suggest_rule
from agent_cli.session.services import SessionServices
from agent_cli.session.session_state import SessionState
from agent_cli.session.state import Emit
from agent_cli.session.turn_context import TurnContext

END_REASONS = ("clear", "logout", "prompt_input_exit", "other")
IDLE_SECONDS = 60.0  # Claude Code's idle notification


def end_reason(hooks: HookState, reason: str) -> None:
    """What SessionEnd will say when the session closes (the front end knows why it closes it)."""
    hooks.end_reason = reason if reason in END_REASONS else "other"


def cleared(old: HookState, new: HookState) -> None:
    """``/new`` (Claude Code's ``/clear``) replaces a session by a new one (their hooks ``old``
    and ``new``): SessionEnd says clear, the next SessionStart says clear."""
    end_reason(old, "clear")
    if new.pending_start == "startup":
        new.pending_start = "clear"


async def session_end(
    turn: TurnContext, state: SessionState, services: SessionServices, emit: Emit | None = None
) -> None:
    """SessionEnd, once, for a top-level session; then waits for the hook work still running
    beside it (Notification and async hooks, the notify program), a subagent's too."""
    hooks = state.hooks
    if not hooks.ended and turn.agent_name is None and hooks.pending_start is None:
        hooks.ended = True
        unseen: list[ev.Event] = []
        await run_hooks(turn, state, services, "SessionEnd", emit or unseen.append, reason=hooks.end_reason)
    if hooks.background:
        await asyncio.gather(*hooks.background, return_exceptions=True)


async def notification(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    notification_type: str,
    message: str,
    emit: Emit,
    title: str = "agent",
) -> None:
    """Notification hooks, waited for."""
    await run_hooks(
        turn, state, services, "Notification", emit, notification_type=notification_type, message=message, title=title
    )


def notify_soon(
    turn: TurnContext, state: SessionState, services: SessionServices, notification_type: str, message: str, emit: Emit
) -> None:
    """Notification hooks, started beside whatever waits (they end with the session)."""
    if not state.hooks.table.get("Notification"):
        return
    state.hooks.keep(notification(turn, state, services, notification_type, message, emit))


def approval_waiting(turn: TurnContext, state: SessionState, services: SessionServices, tool: str, emit: Emit) -> None:
    """An approval question is about to be shown."""
    notify_soon(turn, state, services, "permission_prompt", f"agent needs your permission to use {tool}", emit)


async def permission_request(
    turn: TurnContext, state: SessionState, services: SessionServices, tool: str, args: dict[str, Any], emit: Emit
) -> tuple[str | None, str]:
    """(allow | deny | None, the hook's message) for a question about to be asked."""
    if not state.hooks.table.get("PermissionRequest"):
        return None, ""
    rule = suggest_rule(tool, args)
    suggestions = [{"type": "addRules", "rules": [rule], "behavior": "allow", "destination": "localSettings"}]
    outcome = await run_hooks(
        turn,
        state,
        services,
        "PermissionRequest",
        emit,
        tool_name=tool,
        tool_input=args,
        permission_suggestions=suggestions if rule else [],
    )
    if outcome.blocked:
        return "deny", outcome.reason
    return ("allow" if outcome.permission == "allow" else None), ""


async def post_tool_use_failure(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    call: ToolCall,
    args: dict[str, Any],
    error: str,
    emit: Emit,
    *,
    interrupted: bool = False,
) -> None:
    """After a call failed. Its additional context reaches the model with the next request."""
    if not state.hooks.table.get("PostToolUseFailure"):
        return
    outcome = await run_hooks(
        turn,
        state,
        services,
        "PostToolUseFailure",
        emit,
        tool_name=call.name,
        tool_input=args,
        tool_use_id=call.call_id,
        error=error,
        is_interrupt=interrupted,
    )
    queue_context(state.hooks, "PostToolUseFailure", outcome.context)


async def subagent_start(
    turn: TurnContext,
    state: SessionState,
    services: SessionServices,
    child_id: str,
    child_hooks: HookState,
    agent_type: str,
    emit: Emit,
) -> None:
    """Before a subagent runs: the parent's SubagentStart hooks (the parent's turn, state and
    services); their context is the child's (``child_hooks``)."""
    if not state.hooks.table.get("SubagentStart"):
        return
    outcome = await run_hooks(turn, state, services, "SubagentStart", emit, agent_id=child_id, agent_type=agent_type)
    queue_context(child_hooks, "SubagentStart", outcome.context)
