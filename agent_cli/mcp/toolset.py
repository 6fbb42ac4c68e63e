"""The session's side of MCP: servers (a :class:`McpManager`) and the tools they put in the registry.

:mod:`agent_cli.runtime` builds the toolset with the session's tool registry. :meth:`McpToolset.sync`
runs at the start of every turn, never inside one: the first time it waits for servers still
starting, later it applies ``list_changed`` notifications. So the tool list of a turn's requests
never changes mid-turn, and in search/call mode never at all.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.context.prompts import render_prompt
from agent_cli.context.tokens import TOOL_OVERHEAD_TOKENS, TokenCounter
from agent_cli.mcp.config import ServerList, ServerSpec, parse_mcp_json
from agent_cli.mcp.manager import McpManager
from agent_cli.mcp.tools import McpTool, build_tools
from agent_cli.models.base import ToolSpec
from agent_cli.tools import door_faces
from agent_cli.tools.base import Tool
from agent_cli.tools.registry import ToolRegistry

Emit = Callable[[ev.Event], None]


def spec_tokens(count: Callable[[str], int], specs: list[ToolSpec]) -> int:
    """What tool definitions cost in the request, counted as ``/context`` counts them."""
    return sum(
        TOOL_OVERHEAD_TOKENS + count(spec.name + spec.description + json.dumps(spec.parameters, sort_keys=True))
        for spec in specs
    )


def plugin_servers(plugins: Any) -> ServerList:
    """The MCP servers the active plugins declare, ``${CLAUDE_PLUGIN_ROOT}`` and the like expanded."""
    specs: list[ServerSpec] = []
    warnings: list[str] = []
    for plugin, source in plugins.mcp_sources():
        found, problems = parse_mcp_json(
            {"mcpServers": source.servers}, str(source.origin), plugin.variables, scope=f"plugin {plugin.name}"
        )
        specs += found
        warnings += problems
    return ServerList(specs, warnings)


class McpToolset:
    def __init__(
        self,
        manager: McpManager,
        registry: ToolRegistry,
        wire_api: str,
        budget_tokens: int,
        warnings: list[str] | None = None,
    ):
        self.manager = manager
        self.registry = registry  # the session's tools: the servers' join them between turns
        self.wire_api = wire_api
        self.budget_tokens = budget_tokens
        self.search_mode = False
        self.tools: list[McpTool] = []
        self._registered: list[str] = []
        self._synced = False
        self._pending_warnings = list(warnings or [])
        self._shown: set[str] = set()
        self._model_notes: list[str] = []  # "tools changed" for the model, appended by the turn

    @classmethod
    def for_specs(
        cls,
        specs: list[ServerSpec],
        registry: ToolRegistry,
        wire_api: str,
        budget_tokens: int,
        log_dir: Path,
        base_env: dict[str, str] | None,
        warnings: list[str] | None = None,
    ) -> McpToolset:
        """A toolset over ``specs`` (their logs in ``log_dir``); the first note names the project's
        servers from ``.mcp.json`` that will run."""
        toolset = cls(McpManager(specs, log_dir, base_env), registry, wire_api, budget_tokens, warnings)
        project = [spec for spec in specs if spec.scope == "project" and spec.enabled]
        if project:
            listed = "; ".join(f"{spec.name} ({spec.target})" for spec in project)
            toolset._pending_warnings.insert(0, f"project MCP servers from .mcp.json will run: {listed}")
        return toolset

    def take_start_notes(self) -> list[str]:
        """What to tell the user when the session starts (project servers that will run, problems
        reading the configuration); otherwise the first turn shows them."""
        notes, self._pending_warnings = self._pending_warnings, []
        return notes

    def start(self) -> None:
        """Start the servers in the background (needs a running event loop); idempotent."""
        self.manager.start()

    async def aclose(self) -> None:
        """Stop every server process (the session is closing)."""
        await self.manager.aclose()

    # --- at turn boundaries -------------------------------------------------------------

    async def sync(self, emit: Emit, tokens: TokenCounter, count_exactly: Callable[[], Awaitable[None]]) -> None:
        """Wait for servers still starting, report failures, and update the registry's MCP tools.
        ``tokens`` is the session's counter for its current model; ``count_exactly`` switches the
        session to exact counts (when the tools' cost is near the budget)."""
        manager = self.manager
        if manager.starting or not manager.started:
            await manager.wait_started()
        changed = await manager.refresh()
        warnings, self._pending_warnings = self._pending_warnings + manager.take_failures(), []
        if changed or not self._synced or self._servers_changed():
            before = {tool.name for tool in self.tools} if self._synced else None
            self._synced = True
            tools, problems = build_tools(manager, self.wire_api)
            warnings += problems
            cost = spec_tokens(tokens.text_tokens, [tool.spec for tool in tools])
            if not self.search_mode and tokens.near(cost, self.budget_tokens):
                await count_exactly()  # search mode or not is decided once: exactly
            self._install(tokens, tools)
            if before is not None:
                self._note_changes(before, {tool.name for tool in tools})
        for warning in warnings:
            if warning not in self._shown:
                self._shown.add(warning)
                emit(ev.Warning(warning))

    def _note_changes(self, before: set[str], after: set[str]) -> None:
        added, removed = sorted(after - before), sorted(before - after)
        if not added and not removed:
            return
        lines = [f"Added: {', '.join(added)}"] if added else []
        lines += [f"Removed: {', '.join(removed)}"] if removed else []
        if self.search_mode:
            lines.append("(They are reached through mcp_search and mcp_call.)")
        self._model_notes.append(render_prompt("mcp_tools_changed.md", changes="\n".join(lines)).strip())

    def take_model_notes(self) -> list[str]:
        """What the model should be told about tools that appeared or went away: appended to the
        conversation as new items (the earlier requests' prefix stays byte-identical)."""
        notes, self._model_notes = self._model_notes, []
        return notes

    def _servers_changed(self) -> bool:
        """A server joined (a plugin's, started late) or left since the tools were built."""
        return {c.spec.name for c in self.manager.with_tools()} != {tool.server for tool in self.tools}

    def _install(self, tokens: TokenCounter, tools: list[McpTool]) -> None:
        cost = spec_tokens(tokens.text_tokens, [tool.spec for tool in tools])
        if not self.search_mode and cost > self.budget_tokens:
            self.search_mode = True  # for the rest of the session, so the tool list stays stable
        added = registry_entries(tools, self.search_mode)
        self.registry.replace(self._registered, added)
        self._registered = [tool.name for tool in added]
        self.tools = tools

    # --- during a turn ------------------------------------------------------------------

    def pending_specs(self, count: Callable[[str], int]) -> list[ToolSpec]:
        """Before the first turn installs them: the MCP part of the tool list that turn will send,
        from the servers ready now (for ``/context``); nothing once installed."""
        if self._synced:
            return []
        specs = [tool.spec for tool in self._upcoming_tools()]
        if specs and (self.search_mode or spec_tokens(count, specs) > self.budget_tokens):
            return search_specs()
        return specs

    def _upcoming_tools(self) -> list[McpTool]:
        return self.tools if self._synced else build_tools(self.manager, self.wire_api)[0]

    def server_tokens(self, count: Callable[[str], int]) -> dict[str, int]:
        """What each server's tool schemas cost (would cost, in search mode); before the first turn
        installs them, what the ready servers' tools will cost."""
        tools = self._upcoming_tools()
        totals: dict[str, int] = {}
        for tool in tools:
            totals[tool.server] = totals.get(tool.server, 0) + spec_tokens(count, [tool.spec])
        return totals


def budget_tokens(context_window: int, percent: int) -> int:
    """What the MCP tools' schemas may cost before search mode: ``percent`` (the config's
    ``mcp_tool_budget_percent``) of the window."""
    return context_window * percent // 100


def registry_entries(tools: list[McpTool], search_mode: bool) -> list[Tool]:
    """The tool-registry entries for ``tools``: listed, or in search mode unlisted, so they stand
    behind the door (``mcp_search`` / ``mcp_call``, tools/door.py) each request offers for them."""
    for tool in tools:
        tool.listed = not search_mode
    return list(tools)


def subagent_entries(tools: list[McpTool], budget: int, count: Callable[[str], int]) -> list[Tool]:
    """A subagent's MCP entries for the parent's ``tools`` it may use, on its own ``budget``
    (:func:`budget_tokens`): listed when their schemas fit it (even while the parent, with more
    tools, is in search mode), else its own ``mcp_search`` and ``mcp_call`` that find and call only these."""
    own = [copy.copy(tool) for tool in tools]  # the parent's stay as its mode lists them
    return registry_entries(own, spec_tokens(count, [tool.spec for tool in own]) > budget)


def search_specs() -> list[ToolSpec]:
    """The two tools search mode lists instead of the servers' own: the door's MCP face."""
    return [door_faces.MCP.search, door_faces.MCP.call]
