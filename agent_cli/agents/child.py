"""A subagent's run: a child :class:`Session` with its own history and fewer tools.

The child is the same Session class and runs the same turn loop, inside the parent's ``task``
call. It never gets more than its parent: the same sandbox and approval state (approvals are
asked in the parent's UI, labelled with the agent's name), only tools the parent's mode allows,
and ``task`` only while ``max_agent_depth`` allows. Its events reach the front ends wrapped in
:class:`~agent_cli.events.SubagentEvent`; its tokens count in the session totals, never in the
parent's context. Its transcript is a session file in a folder beside the parent's.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING

from agent_cli import events as ev
from agent_cli.agents.definition import AgentDefinition
from agent_cli.agents.task_tool import TASK_TOOL, TaskTool
from agent_cli.context.modes import tools_for_mode
from agent_cli.context.prompts import prompt_library
from agent_cli.mcp.names import CALL_TOOL, PREFIX as MCP_PREFIX, SEARCH_TOOL
from agent_cli.models.base import Usage
from agent_cli.session.hooks import MAX_STOP_BLOCKS, HookState, run_hooks

if TYPE_CHECKING:
    from agent_cli.session.session import Emit, Session
    from agent_cli.tools.base import Tool

CHILD_HOOK_EVENTS = ("PreToolUse", "PostToolUse", "PreCompact")  # Stop is SubagentStop, on the parent
TRANSCRIPTS_SUFFIX = ".agents"  # <parent session file stem>.agents/ holds its children's transcripts


@dataclass(frozen=True, slots=True)
class SubagentInfo:
    """What makes a session a subagent (``Session.subagent``)."""

    name: str
    depth: int  # 1 for the session's own children
    parent: Session


@dataclass
class ChildOutcome:
    status: str = "failed"  # completed | failed | interrupted
    final_message: str | None = None
    error: str | None = None
    usage: Usage = Usage()
    transcript: str = ""


def depth_of(session: Session) -> int:
    return session.subagent.depth if session.subagent is not None else 0


def child_tools(parent: Session, definition: AgentDefinition, depth: int) -> list[Tool]:
    """The parent's tools its mode (and a command's limit) allow, narrowed to the agent's list.

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
                tools.append(TaskTool(parent.agents, parent.config.max_parallel_agents))
            continue
        tools.append(parent.tools.get(name))  # type: ignore[arg-type]  # tools keep no state
    if mcp_tools:
        from agent_cli.mcp.toolset import subagent_entries

        tools += subagent_entries(mcp_tools, parent.config, parent.tokens.text_tokens)  # type: ignore[arg-type]
    return tools


def transcript_path(parent: Session, child_id: str, agent: str) -> Path:
    folder = parent.rollout.path.with_suffix(TRANSCRIPTS_SUFFIX)
    return folder / f"{child_id}-{re.sub(r'[^A-Za-z0-9_.-]+', '_', agent)}.jsonl"


def add_usage(session: Session, usage: Usage) -> None:
    """A child's tokens count in the totals of every session above it."""
    parent = session
    while parent is not None:
        parent.total_usage = parent.total_usage + usage
        parent = parent.subagent.parent if parent.subagent is not None else None


def create_child(parent: Session, definition: AgentDefinition) -> Session:
    from agent_cli.session.session import Session, new_session_id

    depth = depth_of(parent) + 1
    model = definition.resolve_model(parent.model, parent.config.provider.wire_api)
    child_id = new_session_id()
    instructions = prompt_library(parent.config.agent_home).render(
        "subagent_preamble.md", agent=definition.name, instructions=definition.prompt
    ).strip() + "\n"
    tools = child_tools(parent, definition, depth)
    child = Session(
        parent.config,
        interactive=parent.approvals.interactive,
        client=parent.client if model == parent.model else None,  # one connection pool per model
        tools=tools,
        instructions=instructions,
        rollout_path=transcript_path(parent, child_id, definition.name),
        model=model,  # counted with its own tokenizer, recorded in its transcript's header
    )
    child.id = child_id
    child.approvals = parent.approvals  # the same sandbox, policy and approvals given so far
    child.shell_snapshot = parent.shell_snapshot  # the login shell is the same; the parent closes it
    child.mode = parent.mode
    child.window.adopt(parent.window)  # what the parent learned of a window holds; what the child learns stays its own
    child.compaction.setting = parent.compaction.setting  # /autocompact applies to subagents too
    child.agents = parent.agents
    child.hooks = HookState(
        {event: specs for event, specs in parent.hooks.table.items() if event in CHILD_HOOK_EVENTS}, pending_start=None
    )
    child.subagent = SubagentInfo(definition.name, depth, parent)
    for tool in tools:
        if isinstance(tool, TaskTool):
            tool.session = child
    return child


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
        if isinstance(event, (ev.TurnComplete, ev.TurnFailed, ev.TurnAborted)):
            self.ended = event
        self.emit(ev.SubagentEvent(self.call_id, self.agent, event))
        if isinstance(event, ev.TokenCount):
            add_usage(self.parent, event.last)
            if self.parent.subagent is None:  # only the top session reports totals to the status bar
                self.emit(self.parent.token_count_event())


async def run_subagent(
    parent: Session, definition: AgentDefinition, description: str, prompt: str, call_id: str, emit: Emit
) -> ChildOutcome:
    """Run ``prompt`` in a new child session until it answers; stopped with the parent's turn."""
    from agent_cli.session.turn import run_turn

    child = create_child(parent, definition)
    relay = _Relay(parent, call_id, definition.name, emit)
    outcome = ChildOutcome(transcript=str(child.rollout.path))
    try:
        text, blocks = prompt, 0
        while True:
            await run_turn(child, text, relay)
            outcome = _ending(relay.ended, outcome)
            if outcome.status != "completed" or blocks >= MAX_STOP_BLOCKS:
                break
            hook = await run_hooks(
                parent, "SubagentStop", emit, agent=definition.name, description=description,
                stop_hook_active=blocks > 0, last_assistant_message=outcome.final_message,
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
        emit(ev.SubagentFinished(  # before closing: a second Ctrl+C may cut the close short
            call_id, definition.name, description, outcome.status,  # type: ignore[arg-type]
            outcome.final_message, outcome.usage, outcome.transcript,
        ))
        await close_child(child, parent)
    return outcome


async def close_child(child: Session, parent: Session) -> None:
    """Close what the child opened (its session file, memory stores, a client of its own), not
    what it borrowed from the parent (the model client, the shell snapshot)."""
    if child.model == parent.model:
        child._client = None  # the parent's client: it stays open
    child.shell_snapshot = None
    await child.aclose()


def _ending(event: ev.Event | None, outcome: ChildOutcome) -> ChildOutcome:
    if isinstance(event, ev.TurnComplete):
        return replace(outcome, status="completed", final_message=event.last_message, error=None)
    reason = getattr(event, "message", None) or getattr(event, "reason", None) or "the agent stopped without an answer"
    return replace(outcome, status="failed", error=reason)
