"""``/mcp`` (the servers, their status and what their tools cost) and MCP prompts run as commands."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation, attachment_budget, run_model_turn
from agent_cli.commands.tables import table
from agent_cli.mcp.connection import McpCallError, describe_error
from agent_cli.mcp.oauth import uses_oauth
from agent_cli.mcp.prompts import (
    McpPrompt,
    PromptUsageError,
    parse_arguments,
    prompt_commands,
    prompt_text,
    resource_block,
)
from agent_cli.session.session import Session

if TYPE_CHECKING:
    from agent_cli.commands.expand import ReadResource

NO_SERVERS = (
    "no MCP servers configured: add [mcp_servers.NAME] to config.toml (`agent mcp add NAME -- CMD ARGS`), "
    "or a .mcp.json to the repository"
)


def count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


def mcp_prompts(session: Session) -> list[McpPrompt]:
    if session.mcp is None:
        return []

    return prompt_commands(session.mcp.manager)


def mcp_summary(session: Session) -> str:
    """One line for ``/status``: how many servers are in each state, the failed ones by name."""
    states = session.mcp.manager.states()  # type: ignore[union-attr]
    parts = []
    for status in ("ready", "starting", "failed", "stopped", "disabled"):
        names = [state.name for state in states if state.status == status]
        if names:
            parts.append(f"{len(names)} {status}" + (f": {', '.join(names)}" if status == "failed" else ""))
    failed = any(state.status == "failed" for state in states)
    return ", ".join(parts) + (" (/mcp for details)" if failed else "")


async def mcp_command(inv: Invocation) -> None:
    session = inv.session
    if session.mcp is None:
        inv.emit(ev.Notice(NO_SERVERS, title="mcp"))
        return
    words = inv.args.split()
    if words and words[0] in ("login", "logout"):
        await login_command(inv, words[0], words[1:])
        return
    toolset = session.mcp
    if not session.approvals.interactive:  # agent exec: report servers once they started
        await toolset.manager.wait_started()
    tokens = toolset.server_tokens(session.tokens.text_tokens)
    rows = []
    for state in toolset.manager.states():
        status = f"failed: {state.error}" if state.status == "failed" else state.status
        facts = [state.transport, status]
        if state.auth is not None and not (state.status == "failed" and state.auth == "needs login"):
            facts.append(state.auth)
        if state.status == "ready":
            facts.append(f"{count(state.tools, 'tool')}, {tokens.get(state.name, 0):,} tokens")
            facts += [count(state.prompts, "prompt")] if state.prompts else []
            facts += [count(state.resources, "resource")] if state.resources else []
        rows.append((state.name, " · ".join(facts)))
        rows.append(("", f"{state.target} ({state.scope})"))
    text = table(rows)
    total = sum(tokens.values())
    if toolset.search_mode:
        text += (
            f"\n\nSearch mode: the MCP tools' schemas ({total:,} tokens) exceed mcp_tool_budget_percent "
            f"({session.config.mcp_tool_budget_percent}% of the window), so the model gets mcp_search and mcp_call instead."
        )
    elif total:
        text += f"\n\nMCP tool schemas: {total:,} tokens in every request."
    if any(state.auth is not None for state in toolset.manager.states()):
        text += "\n\n/mcp login NAME signs in to a server (in the browser); /mcp logout NAME forgets its tokens."
    inv.emit(ev.Notice(text, title="mcp"))


async def login_command(inv: Invocation, action: str, names: list[str]) -> None:
    """``/mcp login NAME``: the browser signs in, the server reconnects; ``/mcp logout NAME``."""
    manager = inv.session.mcp.manager  # type: ignore[union-attr]
    if len(names) != 1:
        raise InputError(f"usage: /mcp {action} NAME")
    connection = manager.connection(names[0]) if names[0] in manager.connections else None
    if connection is None or not uses_oauth(connection.spec):
        oauth = [c.spec.name for c in manager.connections.values() if uses_oauth(c.spec)]
        raise InputError(f"no OAuth MCP server named {names[0]!r} (OAuth servers: {', '.join(oauth) or 'none'})")
    name = connection.spec.name
    if action == "logout":
        removed = await manager.logout(name)
        inv.emit(ev.Notice(f"logged out of {name}" if removed else f"not logged in to {name}", title="mcp"))
        return
    try:
        await manager.login(name, lambda line: inv.emit(ev.Notice(line, title="mcp")))
    except Exception as exc:  # noqa: BLE001 - the SDK's flow errors are many; the session goes on
        raise InputError(f"login to {name} failed: {describe_error(exc)}") from None
    state = connection.status if connection.status != "failed" else f"failed: {connection.error}"
    inv.emit(ev.Notice(f"logged in to {name} ({state}, {count(len(connection.tools), 'tool')})", title="mcp"))


async def run_mcp_prompt(inv: Invocation, prompt: McpPrompt) -> None:
    """The prompt's messages, with its arguments, become the user's turn."""
    session = inv.session
    try:
        arguments = parse_arguments(prompt, inv.args)
        result = await session.mcp.manager.get_prompt(prompt.server, prompt.name, arguments)  # type: ignore[union-attr]
    except (PromptUsageError, McpCallError) as exc:
        raise InputError(str(exc)) from None
    text = prompt_text(result)
    if not text:
        raise InputError(f"/{prompt.command}: the server returned an empty prompt")
    await run_model_turn(session, text, inv.emit, typed=inv.typed, recall=inv.args)


def resource_reader(session: Session) -> ReadResource | None:
    """What expands ``@server:uri`` in a prompt; None without MCP servers."""
    if session.mcp is None:
        return None

    manager = session.mcp.manager

    async def read(token: str) -> str | None:
        await manager.wait_started()
        try:
            return await resource_block(manager, token, attachment_budget(session))
        except McpCallError as exc:
            raise InputError(f"@{token}: {exc}") from None

    return read
