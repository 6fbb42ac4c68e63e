"""Sessions in the per-user host from the command line (agent_cli/remote/host.py):
`agent --bg PROMPT` starts one there, in a worktree of its own unless told otherwise, and prints
its id; `agent sessions` lists the live ones beside the saved ones; `agent sessions stop ID` ends
one, with every process it started."""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
from pathlib import Path
from typing import TextIO

from agent_cli.app_server.client import AppServerClient, ServerError
from agent_cli.display import short_path
from agent_cli.headless.common import fail, load_config_or_exit
from agent_cli.headless.worktree_cmd import drop_if_unused, prepare, worktree_request
from agent_cli.paths import agent_home
from agent_cli.remote import live
from agent_cli.remote.conversation import CODEX_MODES
from agent_cli.remote.host import HostError, connect_host
from agent_cli.remote.start_options import OptionError, first_mode, thread_params
from agent_cli.terminal_text import terminal_safe
from agent_cli.worktrees.entering import Entered, GitError, open_worktree
from agent_cli.worktrees.store import containing

STATE_WIDTH = 20


# --- agent --bg ---------------------------------------------------------------------------------


def run_background(args: argparse.Namespace, out: TextIO | None = None) -> int:
    """`agent --bg PROMPT`: the session starts in the host and this command ends, printing its id."""
    prompt = args.prompt if args.prompt not in (None, "-") else (sys.stdin.read() if not sys.stdin.isatty() else "")
    if not prompt.strip():
        fail('--bg needs a prompt: agent --bg "what to do"')
    try:
        params, mode = thread_params(args), first_mode(args)
    except OptionError as exc:
        fail(f"--bg: {exc}")
    cwd = Path(args.cd).expanduser().resolve() if args.cd else Path.cwd()
    entered = None if args.no_worktree else in_own_worktree(args, cwd)
    try:
        thread_id = asyncio.run(start_in_host(entered.cwd if entered else cwd, params, mode, prompt))
    except (HostError, ServerError, ConnectionError, OSError) as exc:
        if entered is not None and entered.created:
            drop_if_unused(entered.worktree)  # made for nothing: gone again
        fail(f"--bg: {exc}")
    print(thread_id, file=out or sys.stdout, flush=True)
    print(f"agent: running in the background; watch it with: agent attach {thread_id}", file=sys.stderr)
    return 0


def in_own_worktree(args: argparse.Namespace, cwd: Path) -> Entered:
    """A worktree for the session (``-w NAME``, else a generated name): made, set up as `agent -w`
    sets one up (the ignored files it names copied, the trust answer carried over, its set-up
    command run here first)."""
    request = worktree_request(args) or (None, getattr(args, "base", None))
    try:
        entered = open_worktree(*request, cwd=cwd)
    except (GitError, ValueError) as exc:
        fail(f"--bg runs the session in a worktree of its own: {exc} (--no-worktree runs it here)")
    print(f"agent: {terminal_safe(entered.line())}", file=sys.stderr)
    for warning in entered.warnings:
        print(f"agent: warning: {terminal_safe(warning)}", file=sys.stderr)
    args.cd = str(entered.cwd)
    if (setup := prepare(entered, load_config_or_exit(args), args)) is not None:
        run_setup(entered, setup)
    return entered


def run_setup(entered: Entered, command: str) -> None:
    print(f"agent: the worktree's set-up command: {terminal_safe(command)}", file=sys.stderr)
    done = subprocess.run(command, shell=True, cwd=entered.cwd, stdin=subprocess.DEVNULL, stdout=sys.stderr)
    if done.returncode != 0:
        print(f"agent: warning: the set-up command failed (exit {done.returncode}); starting anyway", file=sys.stderr)


async def start_in_host(cwd: Path, params: dict, mode: str | None, prompt: str) -> str:
    client = await connect_host(start=True)
    assert client is not None
    try:
        answer = await client.request("thread/start", {"cwd": str(cwd), **params})
        thread_id = str(answer["thread"]["id"])
        turn: dict = {"threadId": thread_id, "input": [{"type": "text", "text": prompt, "text_elements": []}]}
        if mode is not None:
            turn["collaborationMode"] = {"mode": CODEX_MODES[mode], "settings": None}
        await client.request("turn/start", turn)
        return thread_id
    finally:
        await client.close()


# --- agent sessions: the live ones, and stop -----------------------------------------------------


def print_live(out: TextIO) -> None:
    """The sessions the host holds now, when a host runs (none is started to ask)."""
    try:
        sessions = asyncio.run(_live())
    except (HostError, ServerError, ConnectionError, OSError) as exc:
        print(f"agent: warning: the host did not answer: {terminal_safe(str(exc))}", file=sys.stderr)
        return
    if not sessions:
        return
    out.write(f"{'LIVE IN THE HOST':<{STATE_WIDTH}}  {'ID':<8}  {'DIRECTORY':<28}  FIRST PROMPT\n")
    for session in sessions:
        prompt = " ".join((session.preview or "(no prompt yet)").split())
        if session.name:
            prompt = f"[{session.name}] {prompt}"
        line = f"{session.state:<{STATE_WIDTH}}  {session.short_id:<8}  {folder(session.cwd):<28}  {prompt[:80]}"
        out.write(terminal_safe(line) + "\n")
    out.write("Watch one with `agent attach ID`; end one with `agent sessions stop ID`.\n\n")


def folder(cwd: str) -> str:
    """Where it runs, as the saved list shows it: a worktree of the agent's as its repository @NAME."""
    worktree = containing(agent_home(), Path(cwd))
    if worktree is None:
        return short_path(cwd)
    label = f"@{worktree.name}"
    return short_path(worktree.repository, limit=27 - len(label)) + " " + label


async def _live() -> list[live.LiveSession]:
    client = await connect_host(start=False)
    if client is None:
        return []
    try:
        return await live.live_sessions(client)
    finally:
        await client.close()


def run_stop(argv: list[str], out: TextIO) -> int:
    parser = argparse.ArgumentParser(
        prog="agent sessions stop",
        description="End a session running in the per-user host: its turn is interrupted, its session "
        "saved and closed, and every process it started ends.",
    )
    parser.add_argument("session", help="its id (as `agent sessions` shows it), UUID or name")
    args = parser.parse_args(argv)
    try:
        asyncio.run(_stop(args.session))
    except (HostError, ConnectionError, OSError) as exc:
        fail(str(exc))
    except ServerError as exc:
        fail(exc.message)
    out.write(f"stopped {args.session}; resume it with: agent resume {args.session}\n")
    return 0


async def _stop(ref: str) -> None:
    client: AppServerClient | None = await connect_host(start=False)
    if client is None:
        raise HostError("no host runs: no session is live (agent sessions lists the saved ones)")
    try:
        await live.stop(client, ref)
    finally:
        await client.close()
