"""The built-in slash commands: names, descriptions, argument hints and handlers."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from agent_cli.commands.agents_command import agents_command
from agent_cli.commands.check_commands import lint_command, test_command
from agent_cli.commands.checkpoint_commands import fork_command, rewind_command, undo_command
from agent_cli.commands.compaction_commands import autocompact_command, compact_command
from agent_cli.commands.cost_command import cost_command
from agent_cli.commands.export_command import export_command
from agent_cli.commands.info import context_command, diff_command, help_command, skills_command, status_command
from agent_cli.commands.init_agents import init_command
from agent_cli.commands.invocation import Invocation
from agent_cli.commands.login_commands import login_command, logout_command
from agent_cli.commands.mcp_commands import mcp_command
from agent_cli.commands.memory_command import memory_command
from agent_cli.commands.permissions_info import permissions_command
from agent_cli.commands.plugins_info import plugins_command
from agent_cli.commands.ps_command import ps_command
from agent_cli.commands.review import review_command
from agent_cli.commands.session_commands import (
    RESUME_WHILE_BUSY,
    copy_command,
    detach_command,
    mode_command,
    model_command,
    new_command,
    quit_command,
    resume_command,
)
from agent_cli.commands.worktree_commands import rename_command, worktree_command


@dataclass(frozen=True, slots=True)
class Builtin:
    name: str
    description: str
    argument_hint: str
    handler: Callable[[Invocation], Awaitable[None]]
    aliases: tuple[str, ...] = ()
    # False: only reports, never touches the history, so it may run while a turn is running
    needs_idle: bool = True
    # What it says when typed while a turn runs, when it is refused then rather than queued
    busy_refusal: str | None = None


BUILTINS: tuple[Builtin, ...] = (
    Builtin(
        "review",
        "review changes with read-only tools: prioritized findings with file:line",
        "[@file ... | --uncommitted | --base BRANCH | --commit SHA | instructions]",
        review_command,
    ),
    Builtin(
        "compact",
        "summarize the conversation to free context, optionally saying what to keep",
        "[focus | show]",
        compact_command,
    ),
    Builtin(
        "autocompact",
        "show or set when the conversation is compacted, for this session",
        "[PERCENT | TOKENS | on | off]",
        autocompact_command,
        needs_idle=False,
    ),
    Builtin("init", "look at the repository and write an AGENTS.md for it", "[--force]", init_command),
    Builtin(
        "status",
        "model, provider, directory, mode, approvals, sandbox, AGENTS.md, skills, tokens",
        "",
        status_command,
        needs_idle=False,
    ),
    Builtin("context", "what fills the context window, part by part", "", context_command, needs_idle=False),
    Builtin("cost", "the session's tokens and their estimated price", "", cost_command, needs_idle=False),
    Builtin("lint", "run the configured lint_command now", "", lint_command),
    Builtin("test", "run the configured test_command now", "", test_command),
    Builtin("model", "show or switch the model", "[name]", model_command),
    Builtin("mode", "show or switch the mode: agent, ask (read-only) or plan", "[agent|ask|plan]", mode_command),
    Builtin("diff", "git diff of the working tree, untracked files included", "", diff_command, needs_idle=False),
    Builtin("skills", "the skills found and where they come from", "", skills_command, needs_idle=False),
    Builtin(
        "memory",
        "what the agent remembers: list, add, forget, edit, search",
        "[list | add [--scope S] TEXT | forget ID | edit ID | search QUERY]",
        memory_command,
        needs_idle=False,
    ),
    Builtin("plugins", "the plugins loaded and what each contributed", "", plugins_command, needs_idle=False),
    Builtin(
        "permissions",
        "permission rules, where they come from, what decided the last calls",
        "",
        permissions_command,
        needs_idle=False,
    ),
    Builtin(
        "agents", "the subagents the task tool can run and where each comes from", "", agents_command, needs_idle=False
    ),
    Builtin(
        "mcp",
        "MCP servers: status, logins, tools and what their schemas cost",
        "[login NAME | logout NAME]",
        mcp_command,
        needs_idle=False,
    ),
    Builtin(
        "ps",
        "background processes: command, pid, time, exit status, last lines; `kill ID` stops one",
        "[kill ID]",
        ps_command,
        aliases=("tasks",),
        needs_idle=False,
    ),
    Builtin(
        "undo",
        "restore the files to before the last turn that changed them (shows the diff, asks)",
        "[--yes]",
        undo_command,
    ),
    Builtin(
        "rewind",
        "go back to an earlier prompt: code and conversation, conversation only, or code only",
        "[N|-N [both|conversation|code]]",
        rewind_command,
    ),
    Builtin("fork", "continue this conversation (up to before prompt N) in a new session", "[N]", fork_command),
    Builtin("copy", "copy the last answer to the clipboard", "", copy_command, needs_idle=False),
    Builtin(  # waits for a running turn: writing FILE may ask (command_writes.py), and only a turn's task can
        "export",
        "the conversation as Markdown, tool calls folded: to FILE, or to the clipboard",
        "[FILE]",
        export_command,
    ),
    Builtin("new", "start a new conversation with the same settings", "", new_command, aliases=("clear",)),
    Builtin("resume", "resume a saved session", "[session id]", resume_command, busy_refusal=RESUME_WHILE_BUSY),
    Builtin("rename", "name this session (resume it by its name)", "[name]", rename_command),
    Builtin(
        "worktree",
        "show this session's git worktree, or go on in worktree NAME (made when new)",
        "[name]",
        worktree_command,
    ),
    Builtin(
        "login", "set up a provider: a key, a local server or a URL (stored under the agent's home)", "", login_command
    ),
    Builtin("logout", "forget the stored API keys", "", logout_command),
    Builtin("help", "list the commands, or describe one", "[command]", help_command, needs_idle=False),
    Builtin("quit", "leave", "", quit_command, aliases=("exit",), needs_idle=False),
    Builtin(
        "detach",
        "leave; the session goes on in the background host (agent attach brings it back), PROMPT first",
        "[prompt]",
        detach_command,
    ),
)
