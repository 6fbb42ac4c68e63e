"""`agent exec`: read a prompt, run turns, print progress on stderr and the answer on stdout."""

from __future__ import annotations

import argparse
import asyncio
import atexit
import contextlib
import os
import select
import signal
import sys
import threading
from dataclasses import replace
from pathlib import Path
from typing import NoReturn, TextIO

from agent_cli import events as ev
from agent_cli.commands.context_usage import format_context_table
from agent_cli.commands.conversation import Conversation
from agent_cli.commands.ps_command import exit_notice
from agent_cli.hangup import watch_for_hangup
from agent_cli.headless.common import USAGE_ERROR, check_api_key_or_exit, fail, load_config_or_exit
from agent_cli.headless.exec_options import apply_sandbox_shortcuts
from agent_cli.headless.render_json import JsonRenderer
from agent_cli.headless.render_text import TextRenderer
from agent_cli.headless.sessions_cmd import prepare_exec_resume, restore_or_exit
from agent_cli.headless.worktree_cmd import enter_from_args, leave_after_exec, prepare
from agent_cli.models.base import STOP_REFUSAL
from agent_cli.models.registry import SDK_OF_WIRE
from agent_cli.models.sdk_clients import start_import
from agent_cli.operations import ShellCommand, UserInput
from agent_cli.runtime import RunOptions, RunOptionsError, open_session
from agent_cli.session import Session
from agent_cli.session.approvals import use_exec_default
from agent_cli.session.structured_output import load_schema
from agent_cli.terminal_text import terminal_safe

TURN_FAILED = 1
OUTPUT_SCHEMA_MISMATCH = 3  # the answer did not validate against --output-schema, also after one repair
MAX_TURNS_REACHED = 4
MAX_BUDGET_REACHED = 5
INTERRUPTED = 130  # 128 + SIGINT
LIMIT_EXIT_CODES = {
    "output_schema": OUTPUT_SCHEMA_MISMATCH,
    "max_turns": MAX_TURNS_REACHED,
    "max_budget": MAX_BUDGET_REACHED,
}
INTERACTIVE_ONLY = {
    "resume": "/resume needs the TUI; here use `agent exec resume --last [PROMPT]` or `agent exec resume ID [PROMPT]`",
    "new": "/new needs the TUI; every `agent exec` run already starts a new session",
    "login": "/login needs the TUI; here use `agent login --with-api-key` (the key on stdin)",
    "copy": "/copy needs the TUI; `agent exec` prints the last answer on stdout (or to -o FILE)",
    "worktree": "/worktree NAME needs the TUI; here use `agent exec --worktree NAME PROMPT`",
    "detach": "/detach needs the TUI; here use `agent --bg PROMPT` to start a session in the background host",
}


STDIN_WAIT_SECONDS = 5.0


def stdin_ready(stdin, timeout: float) -> bool:
    """True when stdin has data or is at EOF, so reading it cannot block forever."""
    try:
        ready, _, _ = select.select([stdin], [], [], timeout)
    except (OSError, ValueError, TypeError):
        return True  # not selectable (e.g. a StringIO): reading is safe
    return bool(ready)


def read_prompt(prompt: str | None, stdin: TextIO | None = None) -> str:
    """The prompt from the argument and/or piped stdin. A terminal on stdin is never read.

    With a prompt, stdin is appended only if it delivers data or EOF within a few seconds: a
    parent that leaves stdin open and silent must not hang us.
    """
    source = stdin or sys.stdin  # None where the process has no stdin at all
    piped = source if source is not None and not source.isatty() else None  # never a terminal
    if prompt in (None, "-"):
        if piped is None:
            fail("no prompt given: pass one as an argument, or pipe it on stdin (agent exec - < file)")
        text = piped.read()
        if not text.strip():
            fail("the prompt read from stdin is empty")
        return text
    if piped is not None and stdin_ready(piped, STDIN_WAIT_SECONDS):
        extra = piped.read()
        if extra.strip():
            return f"{prompt}\n\n<stdin>\n{extra.rstrip()}\n</stdin>"
    return prompt


def run_exec(args: argparse.Namespace) -> int:
    resume_path = None
    if getattr(args, "resume", False):  # agent exec resume: find the file, take its model
        resume_path = prepare_exec_resume(args)
    apply_sandbox_shortcuts(args)
    entered = getattr(args, "resumed_worktree", None) or enter_from_args(args)  # --worktree: it starts there
    config = load_config_or_exit(args)
    config = replace(config, writable_roots=config.writable_roots + extra_writable_roots(args.add_dirs))
    check_api_key_or_exit(config)
    # The SDK's import starts before the prompt is read: reading piped stdin may wait for its
    # writer, and the import goes on meanwhile. Not for a /command (it may need no model): an
    # argument says so at once, and a piped prompt that is already there is read first.
    sdk = SDK_OF_WIRE.get(config.provider.wire_api, "openai")
    if args.prompt in (None, "-") and not sys.stdin.isatty() and stdin_ready(sys.stdin, 0):
        prompt = read_prompt(args.prompt)
        if not prompt.lstrip().startswith("/"):
            start_import(sdk)
    else:
        if not (args.prompt or "").lstrip().startswith("/"):
            start_import(sdk)
        prompt = read_prompt(args.prompt)
    images = image_paths(getattr(args, "images", []))
    run = run_options(args)
    config = use_exec_default(config)  # approval_policy "never" unless the user set one
    setup = prepare(entered, config, args)  # a new worktree's copied files and set-up command
    try:
        if resume_path is None:
            session = open_session(config, interactive=False, run=run)
        else:
            session = restore_or_exit(config, resume_path, interactive=False, run=run)
    except RunOptionsError as exc:
        fail(str(exc))
    if args.json:
        renderer = JsonRenderer(sys.stdout)
    else:
        renderer = TextRenderer(sys.stderr, color=use_color(args.color, sys.stderr))
    try:
        outcome = asyncio.run(drive(session, prompt, renderer, images, setup))
    except KeyboardInterrupt:  # before the loop could take over Ctrl+C
        return INTERRUPTED
    finally:
        leave_after_exec(entered, renderer)  # removed when unchanged, else kept and named
    last_message, status = outcome
    if status == USAGE_ERROR:  # the input was refused (unknown /command, missing @file): nothing ran
        return status
    if args.output_last_message:
        Path(args.output_last_message).write_text(last_message or "", encoding="utf-8")
    if not args.json and last_message:
        print(terminal_safe(last_message), flush=True)  # raw text: --json or -o FILE
    return status


def use_color(choice: str, stream) -> bool:
    if choice != "auto":
        return choice == "always"
    return stream.isatty() and not os.environ.get("NO_COLOR")


def read_output_schema(name: str | None) -> dict | None:
    if name is None:
        return None
    try:
        return load_schema(Path(name).expanduser().read_text(encoding="utf-8"))
    except OSError as exc:
        fail(f"--output-schema {name}: cannot read it: {exc.strerror}")
    except (ValueError, UnicodeDecodeError) as exc:
        fail(f"--output-schema {name}: {exc}")


def extra_writable_roots(names: list[str]) -> tuple[Path, ...]:
    """``--add-dir`` folders, relative to where agent was started; a missing one is a usage error."""
    paths = [Path(name).expanduser().resolve() for name in names]
    for name, path in zip(names, paths):
        if not path.is_dir():
            fail(f"--add-dir {name}: not a directory")
    return tuple(paths)


def run_options(args: argparse.Namespace) -> RunOptions:
    """This run's own options, for runtime.open_session to build into the session."""
    return RunOptions(
        max_requests=args.max_turns,
        max_budget_usd=args.max_budget_usd,
        output_schema=read_output_schema(args.output_schema),
        ephemeral=args.ephemeral,
    )


def exit_now(status: int) -> NoReturn:
    """End `agent exec` once everything is written and closed, without the interpreter's
    teardown: freeing the SDK's and the tokenizer's hundreds of thousands of objects one by one
    takes longer than the whole tool round trip. Threads that must finish and ``atexit``
    handlers still run."""
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    atexit._run_exitfuncs()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)


STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Interruption(asyncio.Event):
    """Set when a stop signal arrived; ``signal`` says which (the exit status is 128 + it)."""

    signal: int = signal.SIGINT


def stop_on_ctrl_c(session: Session) -> Interruption:
    """Ctrl+C, SIGTERM, SIGHUP and stdout's reader leaving stop the turn the way Esc does in the TUI: tools are killed, MCP
    servers closed, the history and the session file stay valid, and exec exits 128 + the signal
    (130 for Ctrl+C). A second one stops at once. Returns the event that records it happened."""
    interrupted = Interruption()
    loop = asyncio.get_running_loop()

    def stop(sig: int) -> None:
        if not interrupted.is_set():
            interrupted.signal = sig
        interrupted.set()
        Conversation(session).interrupt()  # the Interrupt operation, from a handler that cannot wait

    def on_signal(sig: int) -> None:
        stop(sig)
        loop.remove_signal_handler(sig)
        # The same signal again ends the process at once, by the kernel: Python's own SIGINT handler
        # would only raise KeyboardInterrupt, and shutting down then waits for a tool still busy in
        # a thread.
        signal.signal(sig, signal.SIG_DFL)

    for sig in STOP_SIGNALS:
        if sig != signal.SIGINT and signal.getsignal(sig) == signal.SIG_IGN:
            continue  # `nohup agent exec …`: the user asked for it to be ignored
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # no handlers on this loop
            loop.add_signal_handler(sig, on_signal, sig)
    # Whoever reads stdout went away (`| head -1` done, the terminal closed): the next write would
    # fail anyway, but that may be minutes away while a command runs.
    watch_for_hangup(sys.stdout.fileno(), lambda: loop.call_soon_threadsafe(stop, signal.SIGPIPE))
    return interrupted


def show_background_exit(renderer, event: ev.Event) -> None:
    """A background process ended: the user hears it at once (the model at its next request)."""
    if isinstance(event, ev.BackgroundProcessExited):
        renderer.render(ev.Notice(exit_notice(event.process), title="background"))


def image_paths(names: list[str]) -> tuple[Path, ...]:
    """The files of ``-i``, relative to where agent was started; a missing one is a usage error."""
    paths = [Path(name).expanduser().resolve() for name in names]
    for name, path in zip(names, paths):
        if not path.is_file():
            fail(f"-i {name}: no such file")
    return tuple(paths)


async def drive(
    session: Session,
    prompt: str,
    renderer: TextRenderer | JsonRenderer,
    images: tuple[Path, ...] = (),
    setup: str | None = None,
) -> tuple[str | None, int]:
    """Run the input (a prompt or a slash command) and return the last message and exit status.

    A command that runs no model turn (/status, /diff, /quit) succeeds unless it reports an error."""
    session.start_mcp()  # MCP servers start in the background; the first request waits for them
    renderer.session_started(session)
    if session.resumed is not None:  # what `agent exec resume` restored
        for event in session.resumed.events():
            renderer.render(event)
    last_message: str | None = None
    notices: list[str] = []  # what a command without a model turn (/diff, /status) produced
    status = 0
    interrupted = stop_on_ctrl_c(session)
    session.background.add_listener(lambda event: show_background_exit(renderer, event))
    conversation = Conversation(session)
    try:
        if setup is not None:  # a new worktree's set-up command (worktrees/): sandboxed, approved
            async for event in conversation.submit(ShellCommand(setup)):
                renderer.render(event)
        async for event in conversation.submit(UserInput(prompt, images)):
            if isinstance(event, ev.CommandAction) and event.action in INTERACTIVE_ONLY:
                event = ev.InputRejected(INTERACTIVE_ONLY[event.action])
            renderer.render(event)
            if isinstance(event, ev.TurnComplete):  # a refusal is no answer: nothing on stdout or in -o FILE
                last_message = None if event.stop_reason == STOP_REFUSAL else event.last_message
            elif isinstance(event, ev.Notice):
                notices.append(event.text)
            elif isinstance(event, ev.ContextUsage):
                notices.append(format_context_table(event))
            elif isinstance(event, ev.TurnFailed):
                status = LIMIT_EXIT_CODES.get(event.reason or "", TURN_FAILED)
            elif isinstance(event, ev.TurnAborted):
                status = TURN_FAILED
            elif isinstance(event, ev.InputRejected):
                status = USAGE_ERROR
    finally:
        await session.aclose()
    renderer.finished()
    if interrupted.is_set():
        return last_message, 128 + interrupted.signal
    if last_message is None and notices and status == 0:
        last_message = "\n\n".join(notices)  # `agent exec /diff > x.patch` gets the diff on stdout
    return last_message, status


__all__ = ["run_exec", "read_prompt", "USAGE_ERROR"]
