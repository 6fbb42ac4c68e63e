"""`agent -p` / `agent --input-format stream-json --output-format stream-json`: parse Claude's
flags, build the session as the other front ends do (``runtime.open_session``), and serve.

Only protocol messages go to stdout: the real stdout is kept for the protocol and file
descriptor 1 points at stderr, so nothing else (a library's print, a child process that
inherits it) can corrupt the stream."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import signal
import sys
import threading
from collections.abc import AsyncIterator
from dataclasses import replace
from pathlib import Path

from agent_cli.arguments import session_flags
from agent_cli.commands.conversation import Conversation
from agent_cli.config import ConfigError, load_config
from agent_cli.headless.common import check_api_key_or_exit, fail
from agent_cli.headless.sessions_cmd import use_recorded_model
from agent_cli.headless.worktree_cmd import enter_from_args, leave_after_exec, prepare
from agent_cli.mcp.config import McpConfigError, ServerSpec, parse_mcp_json
from agent_cli.paths import agent_home
from agent_cli.runtime import RunOptions, RunOptionsError, open_session
from agent_cli.session.forking import fork_file
from agent_cli.session.resume import restore
from agent_cli.session.session import Session
from agent_cli.session.structured_output import load_schema
from agent_cli.store.catalog import find_session, latest_session
from agent_cli.store.rollout import RolloutError
from agent_cli.stream_json import flags
from agent_cli.stream_json.channel import Channel
from agent_cli.stream_json.host_mcp import host_server_spec
from agent_cli.stream_json.serve import ServeOptions, StreamJsonServer
from agent_cli.terminal_text import terminal_safe
from agent_cli.worktrees.entering import Entered

EFFORTS = {"low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "xhigh"}  # Claude's -> Codex's
SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")  # a file name's part: no path, no ..


def run_stream_json(argv: list[str]) -> int:
    args = flags.parse_args(argv)
    protocol_out = os.dup(sys.stdout.fileno())
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    channel = Channel(protocol_out)
    entered = enter_from_args(args)  # -w/--worktree: the session starts there (said on stderr)
    session, options = open_for(args, channel, entered)
    lines = stdin_lines() if args.input_format == "stream-json" else None
    prompt = None if lines is not None else read_prompt(args.prompt)
    try:
        status = asyncio.run(serve(session, channel, options, args.output_format, lines, prompt))
    except KeyboardInterrupt:
        status = 130
    leave_after_exec(entered)  # removed when unchanged, else kept and named (os._exit runs no atexit)
    sys.stderr.flush()
    os._exit(status)  # a thread still blocked on stdin must not hold the exit


def open_for(args: argparse.Namespace, channel: Channel, entered: Entered | None = None):
    """The session the flags describe, new or resumed, and how to serve it."""
    path = resume_path(args)
    if path is not None:
        use_recorded_model(args, path)
    prompt_tool = args.permission_prompt_tool == "stdio"
    mode = "bypassPermissions" if args.dangerously_skip_permissions else (args.permission_mode or "default")
    chosen = {key: value for key, value in session_flags(args).items() if value is not None}
    config_flags = {**flags.permission_flags(mode, prompt_tool), **chosen}  # -a / -s / --mode win
    try:
        config = load_config(Path(args.cd).expanduser() if args.cd else None, overrides_for(args), config_flags)
    except ConfigError as exc:
        fail(f"configuration error: {exc}")
    config = replace(
        config,
        plugin_dirs=tuple(Path(folder).expanduser().resolve() for folder in args.plugin_dirs),
        trust_repository=args.trust,
        writable_roots=config.writable_roots + tuple(Path(d).expanduser().resolve() for d in args.add_dirs),
        claude_settings=flags.setting_sources(args.setting_sources, config.claude_settings),
    )
    check_api_key_or_exit(config)
    if (setup := prepare(entered, config, args)) is not None:
        print(
            f"agent: warning: the worktree's set-up command runs in the TUI and agent exec, not here: {terminal_safe(setup[1:])}",
            file=sys.stderr,
        )
    servers = mcp_servers(args, channel)
    new_id = args.session_id if path is None and args.session_id else None
    if new_id is not None and not SESSION_ID.fullmatch(new_id):
        fail(f"--session-id {terminal_safe(new_id)}: use letters, digits, '-', '_' and '.' (a UUID)")
    schema = None
    if args.json_schema:
        try:
            schema = load_schema(json.dumps(flags.read_json_or_file(args.json_schema, "--json-schema")))
        except ValueError as exc:
            fail(f"--json-schema: {exc}")
    run = RunOptions(  # the limits count per prompt, as in claude (serve.py restarts them)
        max_requests=args.max_turns,
        max_budget_usd=args.max_budget_usd,
        output_schema=schema,
        tool_limit=tool_limit(args),
    )
    try:
        session = open_session(
            config,
            interactive=prompt_tool,
            run=run,
            mcp_servers=servers,
            only_these_mcp_servers=args.strict_mcp_config,
            session_id=new_id,
        )
        if path is not None:
            session = restore(session, path)
    except (RolloutError, RunOptionsError) as exc:
        fail(str(exc))
    instructions(session, args)
    options = ServeOptions(
        permission_mode=mode,
        prompt_tool=prompt_tool,
        partial=args.include_partial_messages,
        schema=bool(args.json_schema),
        replay=args.replay_user_messages,
        states=os.environ.get("CLAUDE_CODE_SDK_READS_SESSION_STATE", "") not in ("", "0", "false"),
        states_shown=os.environ.get("CLAUDE_CODE_EMIT_SESSION_STATE_EVENTS", "") not in ("", "0", "false"),
    )
    return session, options


def resume_path(args: argparse.Namespace) -> Path | None:
    """The session file of --resume, --session-id (when it exists) or --continue; a copy with --fork-session."""
    from_home = agent_home()
    path = None
    try:
        if args.resume:
            path = find_session(from_home, args.resume)
        elif args.session_id:
            try:
                path = find_session(from_home, args.session_id)
            except RolloutError:
                path = None  # a new session with this id
        elif args.continue_last:
            found = latest_session(from_home, Path(args.cd or ".").expanduser().resolve())
            path = found[0] if found is not None and found[1] else None
        if path is not None and args.fork_session:
            path = fork_file(from_home, path)
    except (RolloutError, OSError) as exc:
        fail(f"cannot resume: {exc}")
    return path


def overrides_for(args: argparse.Namespace) -> list[str]:
    """``-c`` overrides, --effort, then --allowedTools / --disallowedTools as permission rules."""
    overrides = list(args.overrides)
    if args.effort in EFFORTS:
        overrides.insert(0, f'model_reasoning_effort="{EFFORTS[args.effort]}"')  # a -c of the user's wins
    allowed = flags.split_names(args.allowed_tools)
    denied = flags.split_names(args.disallowed_tools)
    if args.settings:
        try:
            settings = flags.read_json_or_file(args.settings, "--settings")
        except ValueError as exc:
            fail(str(exc))
        permissions = settings.get("permissions") if isinstance(settings, dict) else None
        if isinstance(permissions, dict):
            allowed += [rule for rule in permissions.get("allow", []) if isinstance(rule, str)]
            denied += [rule for rule in permissions.get("deny", []) if isinstance(rule, str)]
        if isinstance(settings, dict) and isinstance(settings.get("env"), dict):
            os.environ.update({str(k): str(v) for k, v in settings["env"].items()})
    if allowed:
        overrides.append(f"permissions.allow={json.dumps(allowed)}")
    if denied:
        overrides.append(f"permissions.deny={json.dumps(denied)}")
    return overrides


def mcp_servers(args: argparse.Namespace, channel: Channel) -> list[ServerSpec]:
    """--mcp-config's servers: the host's own (``"type": "sdk"``) answer through the protocol."""
    specs: list[ServerSpec] = []
    for value in args.mcp_config:
        try:
            data = flags.read_json_or_file(value, "--mcp-config")
        except ValueError as exc:
            fail(str(exc))
        servers = data.get("mcpServers", {}) if isinstance(data, dict) else {}
        if not isinstance(servers, dict):
            fail("--mcp-config: `mcpServers` must be an object")
        hosted = {
            name: entry for name, entry in servers.items() if isinstance(entry, dict) and entry.get("type") == "sdk"
        }
        specs += [host_server_spec(name, channel) for name in hosted]
        others = {name: entry for name, entry in servers.items() if name not in hosted}
        try:
            found, warnings = parse_mcp_json({"mcpServers": others}, "--mcp-config", scope="flags")
        except McpConfigError as exc:
            fail(str(exc))
        for warning in warnings:
            print(f"agent: warning: {terminal_safe(warning)}", file=sys.stderr)
        specs += found
    return specs


def tool_limit(args: argparse.Namespace) -> BuiltinTools | None:
    """--tools names the built-in tools the model gets (Claude's names or ours; MCP tools stay).
    --disallowedTools is a deny rule (overrides_for): the model reads why a call was refused."""
    if args.tools is None or args.tools.strip().lower() == "default":
        return None
    names, unknown = flags.our_tools(flags.split_names(args.tools))
    for name in unknown:
        print(f"agent: warning: --tools {terminal_safe(name)}: no such tool here; left out", file=sys.stderr)
    return BuiltinTools(names)


class BuiltinTools(frozenset):
    """A tool limit on the built-in tools only: every MCP server's tool passes (as in claude)."""

    def __contains__(self, name: object) -> bool:
        return (isinstance(name, str) and name.startswith("mcp__")) or super().__contains__(name)


def instructions(session: Session, args: argparse.Namespace) -> None:
    """--system-prompt (non-empty) replaces our instructions; --append-system-prompt adds to them."""
    text = args.system_prompt or None
    if args.system_prompt_file:
        text = read_text(args.system_prompt_file, "--system-prompt-file")
    extra = args.append_system_prompt or ""
    if args.append_system_prompt_file:
        extra = "\n\n".join(
            part for part in (extra, read_text(args.append_system_prompt_file, "--append-system-prompt-file")) if part
        )
    if text is None and not extra:
        return
    base = text if text is not None else session.instructions
    session.use_instructions(base.rstrip() + (f"\n\n{extra.strip()}\n" if extra else "\n"))  # for every request


def read_text(name: str, what: str) -> str:
    try:
        return Path(name).expanduser().read_text(encoding="utf-8")
    except OSError as exc:
        fail(f"{what} {name}: cannot read it: {exc.strerror}")
    return ""


def read_prompt(prompt: str | None) -> str:
    if prompt not in (None, "-"):
        return prompt
    if sys.stdin is None or sys.stdin.isatty():
        fail("no prompt given: pass one as an argument, or pipe it on stdin")
    return sys.stdin.read()


def stdin_lines() -> AsyncIterator[bytes]:
    """stdin's lines, read by a daemon thread (a pipe, a file or a socket alike)."""

    async def lines() -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        queue: asyncio.Queue[bytes | None] = asyncio.Queue()

        def read() -> None:
            stream = sys.stdin.buffer
            try:
                for line in iter(stream.readline, b""):
                    loop.call_soon_threadsafe(queue.put_nowait, line)
            except (OSError, ValueError):
                pass
            finally:
                loop.call_soon_threadsafe(queue.put_nowait, None)

        threading.Thread(target=read, name="stdin", daemon=True).start()
        while (line := await queue.get()) is not None:
            yield line

    return lines()


async def serve(
    session: Session, channel: Channel, options: ServeOptions, output: str, lines, prompt: str | None
) -> int:
    server = StreamJsonServer(session, channel, options)
    task = asyncio.current_task()
    loop = asyncio.get_running_loop()
    stopped: list[int] = []

    def on_signal(sig: int) -> None:
        stopped.append(sig)
        Conversation(session).interrupt()  # the Interrupt operation, from a handler that cannot wait
        if task is not None:
            task.cancel()

    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        loop.add_signal_handler(sig, on_signal, sig)
    session.start_mcp()
    await server.begin()
    if lines is None:
        channel.close()  # one prompt, no protocol on stdin: nobody can answer a question (it is a no)
    try:
        if lines is not None:
            return await server.serve(lines)
        return await one_shot(server, channel, output, prompt or "")
    except asyncio.CancelledError:
        return 128 + (stopped[0] if stopped else signal.SIGINT)
    finally:
        await session.aclose()


async def one_shot(server: StreamJsonServer, channel: Channel, output: str, prompt: str) -> int:
    """`agent -p PROMPT`: one turn; stream-json prints every message, json the result, text its text."""
    if output != "stream-json":
        write = channel.write
        channel.write = lambda message: None  # only the result is printed
        result = await server.run_turn(prompt, [])
        channel.write = write
        if output == "json":
            channel.write(result)
        else:
            text = str(result.get("result") or "")
            os.write(channel.out_fd, (text + ("\n" if not text.endswith("\n") else "")).encode("utf-8"))
        return server.status
    await server.run_turn(prompt, [])
    return server.status
