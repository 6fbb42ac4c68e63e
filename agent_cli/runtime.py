"""Assembling sessions: every part a :class:`Session` needs is built here and handed to it.

Front ends call :func:`open_session`; to resume, they fill the new session from its file with
:func:`agent_cli.session.resume.restore`. The ``task`` tool's ``spawn`` calls :func:`open_child`
for each subagent. This module sits above ``agents/``,
``mcp/``, ``plugins/`` and ``session/``: the session never imports them, it receives their parts.

What is read from disk is read once per top-level session: the trust answer, plugins, agent
files and hooks. A child reuses its parent's and borrows its shell snapshot and, on the same
model, its client; it owns (and closes) only its session file, memory stores, background
processes and a client of its own.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from agent_cli.agents.child import child_hooks, child_instructions, child_tools, depth_of, run_child, transcript_path
from agent_cli.agents.definition import AgentDefinition
from agent_cli.agents.discovery import load_agents
from agent_cli.agents.isolation import isolated_approvals, run_isolated
from agent_cli.agents.task_tool import ChildOutcome, TaskTool
from agent_cli.config import Config, without_repository_settings
from agent_cli.context.project_doc import find_git_root, repository_root
from agent_cli.hooks.spec import HookSpec
from agent_cli.lsp.checks import ProjectChecks
from agent_cli.lsp.code_checks import CodeChecks
from agent_cli.lsp.manager import LspManager, LspSettings
from agent_cli.lsp.servers import configured_specs
from agent_cli.lsp.tool import LspTool
from agent_cli.mcp.config import ServerList, ServerSpec, configured_servers
from agent_cli.mcp.toolset import McpToolset, budget_tokens, plugin_servers
from agent_cli.memory.tools import memory_tools
from agent_cli.models.base import ModelClient
from agent_cli.models.chat_quirks import ChatQuirks, quirks_for
from agent_cli.models.model_info import supports_images as model_supports_images
from agent_cli.models.pricing import price_for
from agent_cli.models.registry import create_client, resolve_api_key
from agent_cli.models.retry import RetryPolicy
from agent_cli.models.stream_limits import StreamLimits
from agent_cli.plugins.claude_hooks import settings_hooks
from agent_cli.plugins.loader import PluginSet, load_plugins_for
from agent_cli.session.approvals import Approvals, env_scrubber
from agent_cli.session.checkpointing import TurnCheckpoints
from agent_cli.session.compaction_state import CompactionState
from agent_cli.session.counters import TokenCounters
from agent_cli.session.hook_events import approval_waiting, permission_request
from agent_cli.session.hook_state import HookState
from agent_cli.session.learned import LearnedState
from agent_cli.session.network_access import log_decisions, session_network
from agent_cli.session.parts import ClientFactory, SessionParts, StateParts, SubagentInfo, TerminalFactory
from agent_cli.session.permission_rules import install_rules
from agent_cli.session.run_limits import RunLimits
from agent_cli.session.session import Session, new_session_id
from agent_cli.session.state import Emit
from agent_cli.session.tool_use import ToolUseWatch
from agent_cli.session.window import ContextWindow
from agent_cli.store.rollout import RecordingHistory, RolloutWriter
from agent_cli.tools import default_tools
from agent_cli.tools.background import BackgroundProcesses
from agent_cli.tools.base import Tool
from agent_cli.tools.editor_files import EditorFiles
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.shell_snapshot import ShellSnapshot
from agent_cli.tools.web_search_api import search_api_tool
from agent_cli.trust.gate import TrustState, trust_state, untrusted_raw
from agent_cli.trust.inventory import unconfined_scripts
from agent_cli.worktrees.store import containing


@dataclass(frozen=True)
class RunOptions:
    """What one run asks of its session beyond the config: ``agent exec``'s flags, the Claude
    Agent SDK's (``agent -p``). :func:`open_session` builds the parts they mean."""

    max_requests: int | None = None  # --max-turns: model requests
    max_budget_usd: float | None = None  # --max-budget-usd: needs a price for the model
    output_schema: dict[str, Any] | None = None  # the final answer is JSON that fits it
    ephemeral: bool = False  # no session file (nothing to resume)
    tool_limit: frozenset[str] | None = None  # the tools the Claude Agent SDK allows


class RunOptionsError(ValueError):
    """Options that cannot run as given (a budget for a model without a known price)."""


def open_session(
    config: Config,
    *,
    interactive: bool,
    run: RunOptions = RunOptions(),
    mcp_servers: Iterable[ServerSpec] = (),
    only_these_mcp_servers: bool = False,
    clients: ClientFactory | None = None,
    session_id: str | None = None,
    editor_files: EditorFiles | None = None,
    client_terminal: TerminalFactory | None = None,
) -> Session:
    """A new top-level session for ``config``. ``interactive``: a person answers approvals (the TUI,
    an editor); otherwise the configured policy does (``agent exec``). ``run``: the run's own
    options (limits, an output schema, no session file, fewer tools; raises RunOptionsError for
    ones that cannot hold). ``mcp_servers`` join the configured ones (an editor's, over ACP), or
    replace them with ``only_these_mcp_servers`` (Claude's ``--strict-mcp-config``). ``clients``
    makes a model's client (default: the configured provider's; a benchmark passes a scripted
    model). An editor's files and terminal (ACP) are the front end's; ``session_id`` when the
    front end names the session before it exists."""
    limits = run_limits(config, run)
    trust = trust_state(config)  # until the folder is trusted, none of its own code runs (trust/)
    if not trust.trusted and any(item.kind == "setting" for item in trust.inventory.items):
        config = without_repository_settings(config)  # nor does its config lift the sandbox
    approvals = Approvals.from_config(config, interactive)  # + sandbox and command env
    if approvals.sandbox is not None:  # what hooks, the status line and MCP servers run stays read-only
        approvals.sandbox = replace(approvals.sandbox, read_only_files=tuple(unconfined_scripts(config)))
    install_rules(approvals, config, trust)  # permission rules (permissions/)
    # allowed and denied domains, the network proxy (network/)
    approvals.network = session_network(config, approvals, trust.trusted, interactive, client_terminal is None)
    raw = config.raw if trust.trusted else untrusted_raw(config)  # hooks and MCP servers in force
    plugins = load_plugins_for(config, repository=trust.trusted)  # commands, skills, hooks, agents...
    agents = load_agents(config.cwd, config.agent_home, plugins.agent_sources())
    settings, hook_warnings = claude_settings_hooks(config, trust.trusted)
    session: Session  # the task tool's spawn runs children of the session built below

    async def spawn(
        definition: AgentDefinition, description: str, prompt: str, call_id: str, emit: Emit
    ) -> ChildOutcome:
        return await run_subagent(session, definition, description, prompt, call_id, emit)

    tools = default_tools() + (memory_tools() if config.memory else [])
    if config.max_agent_depth >= 1:
        tools.append(TaskTool(agents, config.max_parallel_agents, spawn))
    search_tools, search_warnings = search_api_tools(config, interactive)
    tools += search_tools
    registry = ToolRegistry(tools)
    checks = code_checks(config, approvals, registry)
    approvals.is_read_only_tool = registry.is_read_only
    session_id = session_id or new_session_id()
    session = Session(
        SessionParts(
            config=config,
            session_id=session_id,
            state=state_parts(config, session_id, config.model, registry, limits=limits, ephemeral=run.ephemeral),
            trust=trust,
            approvals=approvals,
            tools=registry,
            hooks=HookState.from_config(config, [*settings, *plugins.hooks], raw),
            client_factory=clients or client_factory(config),
            plugins=plugins,
            agents=agents,
            mcp=mcp_toolset(
                config, registry, approvals, trust, plugins, raw, list(mcp_servers), only_these_mcp_servers
            ),
            checks=checks,
            shell_snapshot=new_shell_snapshot(config, approvals.env),
            load_warnings=(*hook_warnings, *search_warnings),
            output_schema=run.output_schema,
            editor_files=editor_files,
            client_terminal=client_terminal,
            tool_limit=run.tool_limit,
        )
    )
    log_decisions(approvals.network, session.rollout)
    # PermissionRequest and Notification hooks, as the session's hooks are when the question comes
    approvals.question_hooks = lambda tool, args, emit: permission_request(
        session.turn_context(), session.state, session.services, tool, args, emit
    )
    approvals.question_shown = lambda tool, emit: approval_waiting(
        session.turn_context(), session.state, session.services, tool, emit
    )
    return session


def open_child(
    parent: Session, definition: AgentDefinition, cwd: Path | None = None, moved: tuple[Path, Path] | None = None
) -> Session:
    """A subagent's session under ``parent``: the parent's config, trust, approvals, plugins and
    agents; its own history, session file, tools (narrowed) and system prompt. ``cwd``: it runs
    there (its worktree, agents/isolation.py), with the sandbox rooted there and the rules of
    ``moved`` (checkout, worktree) applying to the worktree's paths."""
    config = parent.config if cwd is None else replace(parent.config, cwd=cwd)
    approvals = parent.approvals
    if cwd is not None:
        approvals = isolated_approvals(parent.approvals, cwd, parent.config.writable_roots, moved)
    depth = depth_of(parent) + 1
    model = definition.resolve_model(parent.model, parent.config.provider.wire_api)
    child_id = new_session_id()
    child: Session  # its own task tool's spawn runs the child's children

    async def spawn(
        definition: AgentDefinition, description: str, prompt: str, call_id: str, emit: Emit
    ) -> ChildOutcome:
        return await run_subagent(child, definition, description, prompt, call_id, emit)

    tools = ToolRegistry(child_tools(parent, definition, depth, spawn))
    path = transcript_path(parent, child_id, definition.name)  # beside the parent's session file
    child = Session(
        SessionParts(
            config=config,
            session_id=child_id,
            state=state_parts(config, child_id, model, tools, rollout_path=path, parent=parent),
            trust=parent.trust,
            approvals=approvals,  # the same sandbox, policy and approvals given so far
            tools=tools,
            hooks=child_hooks(parent),
            client_factory=parent.client_factory,
            plugins=parent.plugins,
            agents=parent.agents,
            shell_snapshot=parent.shell_snapshot,  # the login shell is the same
            checks=parent.checks,  # the same language servers (borrowed: the parent ends them)
            model=model,  # counted with its own tokenizer, recorded in its transcript's header
            mode=parent.mode,
            instructions=child_instructions(parent, definition),
            subagent=SubagentInfo(definition.name, depth, parent),
            client=parent.client if model == parent.model else None,  # one connection pool per model
            borrowed=True,  # the parent closes its client and shell snapshot
        )
    )
    return child


async def run_subagent(
    parent: Session, definition: AgentDefinition, description: str, prompt: str, call_id: str, emit: Emit
) -> ChildOutcome:
    """What the ``task`` tool's ``spawn`` does: a child session for ``definition``, run on ``prompt``."""
    if definition.isolation == "worktree":
        return await run_isolated(parent, definition, description, prompt, call_id, emit, open_child)
    return await run_child(parent, open_child(parent, definition), definition, description, prompt, call_id, emit)


def run_limits(config: Config, run: RunOptions) -> RunLimits:
    """The run's request and budget limits; a budget needs a price for the model."""
    price = None
    if run.max_budget_usd is not None:
        try:
            price = price_for(config.model, config.raw.get("model_prices"))
        except ValueError as exc:
            raise RunOptionsError(f"configuration error: model_prices.{config.model}: {exc}") from None
        if price is None:
            raise RunOptionsError(
                f"--max-budget-usd: no price is known for model {config.model!r}; give one in config: "
                f'[model_prices."{config.model}"] input = USD, cached_input = USD, output = USD (per million tokens)'
            )
    return RunLimits(max_requests=run.max_requests, max_cost_usd=run.max_budget_usd, price=price)


# --- the parts --------------------------------------------------------------------------------


def state_parts(
    config: Config,
    session_id: str,
    model: str,
    tools: ToolRegistry,
    *,
    limits: RunLimits | None = None,
    rollout_path: Path | None = None,
    parent: Session | None = None,
    ephemeral: bool = False,
) -> StateParts:
    """What a session keeps its state in: its file, history, counters, window, checkpoints... A
    subagent's (``parent``) starts from what its parent learned of windows and its /autocompact;
    its file changes are its parent's turn's, so it takes no checkpoints of its own. A session
    started in one of the agent's worktrees says so in its file's header (`agent sessions` shows
    it; resume goes back there); an ``ephemeral`` one writes no file."""
    wire_api = config.provider.wire_api
    worktree = containing(config.agent_home, config.cwd)
    rollout = RolloutWriter.for_new_session(
        config.agent_home,
        session_id,
        config.cwd,
        model,
        config.provider.id,
        rollout_path,
        worktree=worktree.describe() if worktree is not None else None,
    )
    if ephemeral:
        rollout.write_nothing()
    learned = LearnedState(rollout)
    counters = TokenCounters(wire_api, lambda name: sees_images(config, name), model)
    history = RecordingHistory(rollout, estimate=counters.item_tokens)  # switch_model recounts once
    compaction = CompactionState()
    window = ContextWindow(config, model, learned)
    if parent is not None:
        window.adopt(parent.window)
        compaction.setting = parent.compaction.setting
    return StateParts(
        rollout=rollout,
        learned=learned,
        counters=counters,
        history=history,
        compaction=compaction,
        window=window,
        tool_use=ToolUseWatch(model, wire_api),
        background=BackgroundProcesses(config.agent_home),
        limits=limits or RunLimits(),
        checkpoints=TurnCheckpoints(
            config, rollout, history, tools, compaction, enabled=config.checkpoints and parent is None
        ),
    )


def sees_images(config: Config, model: str) -> bool:
    """Whether ``model`` sees images (`model_supports_images` overrides the table)."""
    return config.supports_images if config.supports_images is not None else model_supports_images(model)


def client_factory(config: Config) -> ClientFactory:
    """Clients for ``config``'s provider, one per model; what a chat server rejected is kept for
    the session (and its subagents), so a model switch back does not ask again."""
    known: dict[tuple[str, str], ChatQuirks] = {}  # (server, model): what it rejected

    def create(model: str) -> ModelClient:
        client = create_client(
            config.provider,
            model,
            api_key=resolve_api_key(config.provider),
            retry=RetryPolicy(max_attempts=config.retry_max_attempts),
            max_output_tokens=config.max_output_tokens,
            reasoning_effort=config.reasoning_effort,
            limits=StreamLimits.from_ms(config.model_connect_timeout_ms, config.stream_idle_timeout_ms),
        )
        if client.quirks is not None:  # a chat server
            client.quirks = quirks_for(known, client.url, model)
        return client

    return create


def search_api_tools(config: Config, interactive: bool) -> tuple[list[Tool], list[str]]:
    """``web_search`` through a configured search API, for servers without a search of their own,
    and the warning when the configured one cannot be used."""
    mode = config.web_search or ("cached" if interactive else "off")
    tool, problem = search_api_tool(config.raw.get("web_search_api"), mode, config.provider.wire_api)
    warnings = [f"web_search_api: {problem}; web search through it is off"] if problem else []
    return ([tool] if tool is not None else []), warnings


def mcp_toolset(
    config: Config,
    registry: ToolRegistry,
    approvals: Approvals,
    trust: TrustState,
    plugins: PluginSet,
    raw: dict[str, Any],
    extra: list[ServerSpec],
    only_extra: bool = False,
) -> McpToolset | None:
    """The configured servers (``raw``: those in force), the repository's ``.mcp.json`` (once
    trusted), the plugins' and ``extra`` ones (only these with ``only_extra``); None when there
    are none (the session then does no MCP work at all). A name already taken keeps its first
    definition."""
    root = repository_root(config.cwd) if trust.trusted else None  # .mcp.json waits for trust
    sources = ", ".join(str(path) for path in config.sources) or "config"
    servers = ServerList([], []) if only_extra else configured_servers(raw, root, sources, plugin_servers(plugins))
    if not servers.specs and not servers.warnings and not extra:
        return None
    toolset = McpToolset.for_specs(
        servers.specs,
        registry,
        config.provider.wire_api,
        budget_tokens(config.context_window, config.mcp_tool_budget_percent),
        config.agent_home / "logs",
        approvals.env,
        servers.warnings,
    )
    toolset.manager.add(extra)  # after the others: a name they took keeps its first definition
    return toolset


def code_checks(config: Config, approvals: Approvals, registry: ToolRegistry) -> CodeChecks:
    """Language servers (unless ``lsp = false``) with the ``lsp`` tool, and the lint/test commands.
    ``config`` is the effective one: an untrusted folder's ``[lsp]`` and commands are not in it.
    ``AGENT_LSP_AUTODETECT=0`` leaves out the servers found on PATH (the configured ones run)."""
    project = ProjectChecks(
        config.lint_command,
        config.test_command,
        config.check_rounds,
        config.check_timeout_ms,
        lambda: registry.get("shell"),
        config.agent_home,
    )
    table = config.raw.get("lsp", True)
    if table is False:
        return CodeChecks(None, project)
    specs = configured_specs(table)
    if os.environ.get("AGENT_LSP_AUTODETECT") == "0":
        specs = [spec for spec in specs if spec.configured]
    settings = LspSettings(
        specs,
        find_git_root(config.cwd) or config.cwd,
        config.lsp_wait_ms / 1000,
        config.lsp_token_limit,
        approvals.env,
        config.agent_home / "logs",
        approvals.sandbox if approvals.confined else None,
    )
    manager = LspManager(settings)
    checks = CodeChecks(manager, project)
    if any(shutil.which(spec.command[0]) for spec in specs if spec.command):  # no server at all: no tool
        registry.replace((), [LspTool(manager, checks.start)])
    return checks


def claude_settings_hooks(config: Config, trusted: bool) -> tuple[list[HookSpec], list[str]]:
    """The hooks of ~/.claude/settings.json (the user's own: always) and of the project's
    .claude/settings.json and settings.local.json (once the folder is trusted); all of them run,
    as in Claude Code."""
    project = repository_root(config.cwd)
    if project is None or (project / ".claude").resolve() == (Path.home() / ".claude").resolve():
        # started in ~ without git: that is the user's own settings, read once; in a folder another
        # user can write: not read
        trusted = False
    return settings_hooks(project or config.cwd, trusted, config.claude_settings)


def new_shell_snapshot(config: Config, env: dict[str, str] | None) -> ShellSnapshot | None:
    if not config.shell_snapshot:
        return None
    directory = config.agent_home / "shell-snapshots"
    return ShellSnapshot(directory, config.cwd, env, env_scrubber(config), bash=shutil.which("bash"))
