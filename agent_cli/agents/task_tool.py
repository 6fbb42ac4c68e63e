"""The ``task`` tool: run a subagent and hand its final message back to the model.

The parent's context grows only by that message (cut to the tool-output budget); the child's
full transcript stays in its own session file, whose path the output gives. Several ``task``
calls of one response run at once, at most ``max_parallel_agents`` of them. The tool runs a
subagent through its ``spawn`` callable (:mod:`agent_cli.runtime` gives it one per session).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from agent_cli import events as ev
from agent_cli.agents.definition import AgentDefinition
from agent_cli.agents.discovery import AgentSet
from agent_cli.context.prompts import prompt_library
from agent_cli.context.truncate import TruncationPolicy, truncate_text
from agent_cli.models.base import ToolSpec, Usage
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult

TASK_TOOL = "task"
LISTED_DESCRIPTION_CHARS = 200  # per agent in the tool's description; the file has the rest
MAX_LISTED_AGENTS = 30  # the tool list is part of every request: keep it bounded


@dataclass
class ChildOutcome:
    """How a subagent's run ended, as the ``task`` tool reports it."""

    status: str = "failed"  # completed | failed | interrupted
    final_message: str | None = None
    error: str | None = None
    usage: Usage = Usage()
    transcript: str = ""


# Runs ``definition`` on a task: (definition, description, prompt, call_id, emit) -> its outcome.
Spawn = Callable[[AgentDefinition, str, str, str, Callable[[ev.Event], None]], Awaitable[ChildOutcome]]


def task_spec(agents: AgentSet) -> ToolSpec:
    entries = list(agents.agents.values())
    lines = [f"- {agent.name}: {_cut(agent.description)}" for agent in entries[:MAX_LISTED_AGENTS]]
    if len(entries) > MAX_LISTED_AGENTS:
        lines.append(
            f"- (and {len(entries) - MAX_LISTED_AGENTS} more: " + ", ".join(agents.names[MAX_LISTED_AGENTS:]) + ")"
        )
    description = prompt_library().render("task_tool.md", agents="\n".join(lines)).strip()
    return ToolSpec(
        name=TASK_TOOL,
        description=description,
        parameters={
            "type": "object",
            "properties": {
                "agent": {"type": "string", "description": "Which agent runs the task (a name from the list)."},
                "description": {"type": "string", "description": "A short (3-6 word) label for the user."},
                "prompt": {"type": "string", "description": "The whole task, with every detail the agent needs."},
            },
            "required": ["agent", "description", "prompt"],
            "additionalProperties": False,
        },
    )


def _cut(text: str) -> str:
    return text if len(text) <= LISTED_DESCRIPTION_CHARS else text[: LISTED_DESCRIPTION_CHARS - 1] + "…"


class TaskTool(Tool):
    def __init__(self, agents: AgentSet, max_parallel: int, spawn: Spawn):
        self.agents = agents
        self.spec = task_spec(agents)
        self.spawn = spawn  # runs a subagent as a child of the session that owns this tool
        self._slots = asyncio.Semaphore(max_parallel)

    def define(self, definitions: Iterable[AgentDefinition]) -> None:
        """Agents a front end defines (an SDK host's ``initialize``, before the first request, so
        the tools sent stay as they are): listed first, over any file of the same name."""
        added = {agent.name: agent for agent in definitions}
        merged = {**added, **{name: agent for name, agent in self.agents.agents.items() if name not in added}}
        self.agents.agents.clear()  # one set, shared with the session and its children
        self.agents.agents.update(merged)
        self.spec = task_spec(self.agents)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        name = str(args["agent"]).strip()
        definition = self.agents.get(name)
        if definition is None:
            raise ToolError(f"no agent named {name!r}; available agents: {', '.join(self.agents.names)}")
        prompt = str(args["prompt"])
        if not prompt.strip():
            raise ToolError("`prompt` is empty; describe the whole task for the agent")
        async with self._slots:
            outcome = await self.spawn(definition, str(args["description"]).strip(), prompt, ctx.call_id, ctx.emit)
        policy = TruncationPolicy("tokens", ctx.output_token_limit)
        if outcome.status == "completed":
            body = truncate_text(outcome.final_message or "(the agent gave no final message)", policy)
            return ToolResult(f"{body}\n\n(agent {name} finished; its full transcript: {outcome.transcript})")
        detail = truncate_text(outcome.error or "no reason given", policy)
        return ToolResult(f"agent {name} failed: {detail}\n(its transcript: {outcome.transcript})", success=False)
