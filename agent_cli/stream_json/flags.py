"""The command line of `claude -p` and of the Claude Agent SDK, parsed and mapped onto ours.

The SDK starts its CLI as ``CLI --output-format stream-json --verbose --system-prompt '' …
--input-format stream-json``; every flag it may add is accepted here. Permission modes become
an approval policy, a sandbox and a mode; Claude's tool names become ours."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from agent_cli.arguments import add_session_options, add_worktree_options
from agent_cli.terminal_text import terminal_safe
from agent_cli.tools.claude_names import our_tool_name

PRINT_WORDS = ("-p", "--print", "--input-format", "--output-format")
PERMISSION_MODES = ("default", "acceptEdits", "plan", "bypassPermissions", "dontAsk", "auto")
# Claude's setting sources and the settings files each one stands for (ours and Claude's).
SETTING_SOURCES = ("user", "project", "local")


def wants_stream_json(argv: list[str]) -> bool:
    """True for `agent -p …`, `agent --output-format …` or `agent --input-format …` (any order),
    what `claude -p` scripts and the Claude Agent SDK run."""
    return any(word in PRINT_WORDS or word.startswith(("--input-format=", "--output-format=")) for word in argv)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent -p",
        description="Run headless in the protocol of `claude -p` (the Claude Agent SDK's): "
        "stream-json messages on stdin and stdout, or one prompt with a text or JSON answer.",
    )
    add_session_options(parser)
    add_worktree_options(parser)  # as `claude -p -w NAME` (agent_cli/worktrees/)
    parser.add_argument("-p", "--print", dest="print_mode", action="store_true", help="answer one prompt and exit")
    parser.add_argument("--input-format", choices=("text", "stream-json"), default="text")
    parser.add_argument("--output-format", choices=("text", "json", "stream-json"), default="text")
    parser.add_argument("--verbose", action="store_true", help="accepted (stream-json always carries every message)")
    parser.add_argument("--include-partial-messages", action="store_true", help="stream_event messages as text arrives")
    parser.add_argument(
        "--replay-user-messages", action="store_true", help="echo each user message with its uuid (rewind_files)"
    )
    parser.add_argument("--include-hook-events", action="store_true", help="accepted; hook runs are not reported")
    parser.add_argument("--system-prompt", help="replaces the agent's instructions ('' keeps ours)")
    parser.add_argument("--system-prompt-file", metavar="FILE")
    parser.add_argument("--append-system-prompt", help="added to the agent's instructions")
    parser.add_argument("--append-system-prompt-file", metavar="FILE")
    parser.add_argument("--permission-mode", choices=PERMISSION_MODES)
    parser.add_argument(
        "--dangerously-skip-permissions", action="store_true", help="as --permission-mode bypassPermissions"
    )
    parser.add_argument("--permission-prompt-tool", help="'stdio': every approval is asked over the protocol")
    parser.add_argument("--tools", help="the tools the model gets, Claude's names, comma-separated ('default': all)")
    parser.add_argument("--allowedTools", "--allowed-tools", dest="allowed_tools", action="append", default=[])
    parser.add_argument("--disallowedTools", "--disallowed-tools", dest="disallowed_tools", action="append", default=[])
    parser.add_argument("--max-turns", type=int, help="model requests per prompt")
    parser.add_argument("--max-budget-usd", type=float)
    parser.add_argument("--task-budget", help="accepted and ignored")
    parser.add_argument("--fallback-model", help="accepted and ignored")
    parser.add_argument("--betas", help="accepted and ignored")
    parser.add_argument("--continue", dest="continue_last", action="store_true", help="resume the last session here")
    parser.add_argument("-r", "--resume", metavar="ID", help="resume the session ID")
    parser.add_argument("--session-id", metavar="ID", help="resume ID if it exists (else a new session)")
    parser.add_argument("--fork-session", action="store_true", help="with --resume: continue in a copy")
    parser.add_argument("--resume-session-at", help="accepted and ignored")
    parser.add_argument("--resume-drops-turn", help="accepted and ignored")
    parser.add_argument("--session-mirror", action="store_true", help="accepted and ignored")
    parser.add_argument("--settings", help="a settings file or JSON (its permissions rules and env)")
    parser.add_argument("--setting-sources", help="which of user,project,local settings load ('' none)")
    parser.add_argument("--add-dir", dest="add_dirs", action="append", default=[], metavar="DIR")
    parser.add_argument("--mcp-config", action="append", default=[], help="MCP servers (JSON or a file)")
    parser.add_argument("--strict-mcp-config", action="store_true", help="only the servers of --mcp-config run")
    parser.add_argument("--json-schema", help="the answer is JSON that validates against this schema")
    parser.add_argument("--effort", help="low, medium, high, xhigh or max (a number is accepted and ignored)")
    parser.add_argument("--max-thinking-tokens", type=int, help="accepted and ignored")
    parser.add_argument("--thinking", help="accepted and ignored")
    parser.add_argument("--thinking-display", help="accepted and ignored")
    parser.add_argument("--trust", action="store_true", help="run the repository's own MCP servers and hooks")
    parser.add_argument("prompt", nargs="?", help="with -p and text input: the prompt ('-' or none: stdin)")
    return parser


def parse_args(argv: list[str]) -> argparse.Namespace:
    args = build_parser().parse_args(argv)
    if args.input_format == "stream-json" and args.output_format != "stream-json":
        raise SystemExit("agent: error: --input-format stream-json needs --output-format stream-json")
    return args


def setting_sources(value: str | None, default: tuple[str, ...]) -> tuple[str, ...]:
    """``--setting-sources user,project,local``: which of Claude Code's settings files load (their
    hooks, permission rules, status line); ``''`` none, as the SDK sends by default; absent: all."""
    if value is None:
        return default
    names = tuple(name.strip() for name in value.split(",") if name.strip())
    for name in names:
        if name not in ("user", "project", "local"):
            print(
                f"agent: warning: --setting-sources {terminal_safe(name)}: not user, project or local", file=sys.stderr
            )
    return tuple(name for name in names if name in ("user", "project", "local"))


def split_names(values: list[str] | str | None) -> list[str]:
    """``--allowedTools a,b --allowedTools c`` and ``"Bash(git:*) Read"`` as one list."""
    if values is None:
        return []
    words: list[str] = []
    for value in [values] if isinstance(values, str) else values:
        depth, current = 0, ""
        for char in value:  # split on commas and spaces outside parentheses: Bash(git log:*)
            depth += (char == "(") - (char == ")")
            if char in ", " and depth == 0:
                words.append(current)
                current = ""
            else:
                current += char
        words.append(current)
    return [word.strip() for word in words if word.strip()]


def our_tools(names: list[str]) -> tuple[list[str], list[str]]:
    """Our tool names for Claude's (or ours), and the names with no equivalent."""
    tools, unknown = [], []
    for name in names:
        if name.startswith("mcp__"):
            tools.append(name)
        elif (ours := our_tool_name(name)) is not None:
            tools.append(ours)
        elif name.islower() or "_" in name:
            tools.append(name)  # one of ours already
        else:
            unknown.append(name)
    return list(dict.fromkeys(tools)), unknown


def permission_flags(mode: str | None, prompt_tool: bool) -> dict[str, Any]:
    """Approval policy, sandbox and mode for a Claude permission mode. With a prompt tool
    (``can_use_tool``) the SDK answers every question; without one nobody can."""
    if mode == "bypassPermissions":
        return {"approval_policy": "never", "sandbox_mode": "danger-full-access"}
    if mode == "plan":
        return {"approval_policy": "untrusted" if prompt_tool else "never", "mode": "plan"}
    if mode == "acceptEdits":
        return {"approval_policy": "untrusted" if prompt_tool else "never", "sandbox_mode": "workspace-write"}
    if mode == "dontAsk":
        return {"approval_policy": "never"}
    return {"approval_policy": "untrusted" if prompt_tool else "never"}


def read_json_or_file(value: str, what: str) -> Any:
    """``--mcp-config`` / ``--settings`` / ``--json-schema``: inline JSON or a file holding it."""
    text = value.strip()
    if not text.startswith(("{", "[")):
        try:
            text = Path(value).expanduser().read_text(encoding="utf-8")
        except OSError as exc:
            raise ValueError(f"{what} {value}: cannot read it: {exc.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"{what}: not JSON: {exc}") from None
