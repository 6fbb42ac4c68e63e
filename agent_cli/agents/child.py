"""A subagent's run: a child :class:`Session` with its own history and fewer tools.

The child is the same Session class and runs the same turn loop, inside the parent's ``task``
call; :func:`agent_cli.runtime.open_child` assembles it from what this module chooses. It never
gets more than its parent: the same sandbox and approval state (approvals are asked in the
parent's UI, labelled with the agent's name), only tools the parent's mode allows, and ``task``
only while ``max_agent_depth`` allows. It borrows the parent's plugins, shell snapshot and, on the
same model, its client; it closes only what it opened. Its events reach the front ends wrapped in
:class:`~agent_cli.events.SubagentEvent`; its tokens count in the session totals, never in the
parent's context. Its transcript is a session file in a folder beside the parent's.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import replace
from pathlib import Path

from agent_cli import events as ev
from agent_cli.agents.definition import AgentDefinition
from agent_cli.agents.task_tool import TASK_TOOL, ChildOutcome, Spawn, TaskTool
from agent_cli.context.modes import tools_for_mode
from agent_cli.context.prompts import prompt_library
from agent_cli.mcp.toolset import budget_tokens, subagent_entries
from agent_cli.models.base import Usage
from agent_cli.session.hook_events import subagent_start
from agent_cli.session.hook_state import HookState
from agent_cli.session.hooks import MAX_STOP_BLOCKS, run_hooks
from agent_cli.session.session import Session
from agent_cli.session.state import Emit
from agent_cli.tools.base import Tool
from agent_cli.tools.mcp_names import CALL_TOOL, SEARCH_TOOL
from agent_cli.tools.mcp_names import PREFIX as MCP_PREFIX

CHILD_HOOK_EVENTS = (
    "PreToolUse",
    "PostToolUse",
    "PostToolUseFailure",
    "PreCompact",
)  # Stop is SubagentStop, on the parent
TRANSCRIPTS_SUFFIX = ".agents"  # <parent session file stem>.agents/ holds its children's transcripts


def depth_of(session: Session) -> int:
    return session.subagent.depth if session.subagent is not None else 0


def child_tools(parent: Session, definition: AgentDefinition, depth: int, spawn: Spawn) -> list[Tool]:
    """The parent's tools its mode (and a command's limit) allow, narrowed to the agent's list;
    ``spawn`` runs the child's own subagents (its ``task`` tool, while the depth allows one).

    MCP tools are offered on the child's own budget (:func:`~agent_cli.mcp.toolset.subagent_entries`):
    those the agent names, or all when it names ``mcp_search``/``mcp_call`` or no list."""
    allowed = set(tools_for_mode(parent.mode, parent.tools.names, parent.tools.is_read_only))
    if parent.tool_limit is not None:
        allowed &= parent.tool_limit
    searches = definition.allows(SEARCH_TOOL) or definition.allows(CALL_TOOL)
    tools: list[Tool] = []
    mcp_tools = []
    for name in parent.tools.names:
        if name not in allowed or name in (SEARCH_TOOL, CALL_TOOL):  # the child gets its own
            continue
        if name.startswith(MCP_PREFIX):
            if searches or definition.allows(name):
                mcp_tools.append(parent.tools.get(name))
            continue
        if not definition.allows(name):
            continue
        if name == TASK_TOOL:
            if depth < parent.config.max_agent_depth and parent.agents is not None:
                tools.append(TaskTool(parent.agents, parent.config.max_parallel_agents, spawn))  # type: ignore[arg-type]
            continue
        tools.append(parent.tools.get(name))  # type: ignore[arg-type]  # tools keep no state
    if mcp_tools:
        budget = budget_tokens(parent.config.context_window, parent.config.mcp_tool_budget_percent)
        tools += subagent_entries(mcp_tools, budget, parent.tokens.text_tokens)  # type: ignore[arg-type]
    return tools


def transcript_path(parent: Session, child_id: str, agent: str) -> Path:
    folder = parent.rollout.path.with_suffix(TRANSCRIPTS_SUFFIX)
    return folder / f"{child_id}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', agent)}.jsonl"


def add_usage(session: Session, usage: Usage) -> None:
    """A child's tokens count in the totals of every session above it."""
    parent = session
    while parent is not None:
        parent.count_usage(usage)
        parent = parent.subagent.parent if parent.subagent is not None else None


def child_instructions(parent: Session, definition: AgentDefinition) -> str:
    """The child's system prompt: the subagent preamble around the agent file's instructions."""
    return (
        prompt_library(parent.config.agent_home)
        .render("subagent_preamble.md", agent=definition.name, instructions=definition.prompt)
        .strip()
        + "\n"
    )


def child_hooks(parent: Session) -> HookState:
    """The parent's hooks a child runs (its Stop is the parent's SubagentStop); no SessionStart."""
    table = {event: specs for event, specs in parent.hooks.table.items() if event in CHILD_HOOK_EVENTS}
    return HookState(table, pending_start=None)


class _Relay:
    """The child's emit: wraps its events for the front ends and notes how its turn ended."""

    def __init__(self, parent: Session, call_id: str, agent: str, emit: Emit):
        self.parent, self.call_id, self.agent, self.emit = parent, call_id, agent, emit
        self.ended: ev.Event | None = None
        self.started = False

    def __call__(self, event: ev.Event) -> None:
        if isinstance(event, ev.UserMessage):
            self.started = True
        elif isinstance(event, ev.Warning) and not self.started:
            return  # the session's start warnings (config, sandbox) were shown once already
        if isinstance(event, ev.ApprovalRequest):  # asked in the parent's UI, labelled
            self.emit(replace(event, agent=event.agent or self.agent))
            return
        if isinstance(event, ev.ElicitationRequest):  # an MCP server's question, asked in the parent's UI
            self.emit(event)
            return
        if isinstance(event, (ev.TurnComplete, ev.TurnFailed, ev.TurnAborted)):
            self.ended = event
        self.emit(ev.SubagentEvent(self.call_id, self.agent, event))
        if isinstance(event, ev.TokenCount):
            add_usage(self.parent, event.last)
            if self.parent.subagent is None:  # only the top session reports totals to the status bar
                self.emit(self.parent.token_count_event())


async def run_child(
    parent: Session,
    child: Session,
    definition: AgentDefinition,
    description: str,
    prompt: str,
    call_id: str,
    emit: Emit,
) -> ChildOutcome:
    """Run ``prompt`` in ``child`` until it answers, then close it; stopped with the parent's turn."""
    relay = _Relay(parent, call_id, definition.name, emit)
    outcome = ChildOutcome(transcript=str(child.rollout.path))
    try:
        await subagent_start(
            parent.turn_context(), parent.state, parent.services, child.id, child.hooks, definition.name, emit
        )
        text, blocks = prompt, 0
        while True:
            await child.run_turn(text, relay)
            outcome = _ending(relay.ended, outcome)
            if outcome.status != "completed" or blocks >= MAX_STOP_BLOCKS:
                break
            hook = await run_hooks(
                parent.turn_context(),
                parent.state,
                parent.services,
                "SubagentStop",
                emit,
                agent=definition.name,
                agent_id=child.id,
                agent_type=definition.name,
                description=description,
                stop_hook_active=blocks > 0,
                last_assistant_message=outcome.final_message,
                agent_transcript_path=outcome.transcript,
            )
            if not hook.blocked:
                break
            blocks += 1  # a SubagentStop hook keeps the agent working, as a Stop hook would
            text = f"Do not stop yet. {hook.reason}"
    except asyncio.CancelledError:
        outcome.status, outcome.error = "interrupted", "interrupted by the user"
        child.history.close_open_calls()
        raise
    except Exception as exc:  # a bug in the child ends the child, not the parent's turn
        child.history.close_open_calls()
        outcome.status, outcome.error = "failed", f"internal error: {type(exc).__name__}: {exc}"
    finally:
        outcome.usage = child.total_usage
        emit(
            ev.SubagentFinished(  # before closing: a second Ctrl+C may cut the close short
                call_id,
                definition.name,
                description,
                outcome.status,  # type: ignore[arg-type]
                outcome.final_message,
                outcome.usage,
                outcome.transcript,
            )
        )
        await child.aclose()  # what it opened; the parent's client and shell snapshot stay open
    return outcome


def _ending(event: ev.Event | None, outcome: ChildOutcome) -> ChildOutcome:
    if isinstance(event, ev.TurnComplete):
        return replace(outcome, status="completed", final_message=event.last_message, error=None)
    reason = getattr(event, "message", None) or getattr(event, "reason", None) or "the agent stopped without an answer"
    return replace(outcome, status="failed", error=reason)
