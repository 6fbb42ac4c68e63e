"""``/agents``: the agents the ``task`` tool can run, with where each definition comes from."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.agents.discovery import load_agents
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.display import home_relative

NONE_FOUND = "no agents found (add .agent/agents/NAME.md in the repository or $AGENT_HOME/agents/NAME.md)"


async def agents_command(inv: Invocation) -> None:
    if inv.args:
        raise InputError("/agents takes no arguments")
    session = inv.session
    config = session.config
    found = session.agents or load_agents(config.cwd, config.agent_home, session.plugins.agent_sources())
    entries = []
    for agent in found.agents.values():
        tools = ", ".join(agent.tools) if agent.tools is not None else "all tools"
        model = "" if agent.model == "inherit" else f" · model {agent.model}"
        where = f" · {home_relative(agent.path)}" if agent.path is not None and agent.source != "bundled" else ""
        entries.append(f"{agent.name} [{agent.source}]\n  {agent.description}\n  tools: {tools}{model}{where}")
    text = "\n".join(entries) or NONE_FOUND
    if config.max_agent_depth < 1:
        text += "\n\nThe task tool is off (max_agent_depth = 0)."
    if found.warnings:
        text += "\n\nwarnings:\n" + "\n".join(f"  {warning}" for warning in found.warnings)
    inv.emit(ev.Notice(text, title="agents"))
