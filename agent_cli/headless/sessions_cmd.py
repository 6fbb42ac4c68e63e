"""`agent sessions`, `agent resume` and `agent exec resume`: find a saved session and reopen it.

Unless ``-m``/``--provider`` (or ``-c model=...``) are given, a resumed session keeps the model and
provider it was recorded with, so its reasoning items stay meaningful to the provider.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from agent_cli.arguments import add_place_options, add_session_options
from agent_cli.config import Config
from agent_cli.display import home_relative, human_size, short_path
from agent_cli.export.markdown import ExportHeader, conversation_markdown
from agent_cli.headless.common import check_api_key_or_exit, fail, load_config_or_exit
from agent_cli.headless.host_cmd import print_live, run_stop
from agent_cli.headless.worktree_cmd import prepare, return_to_worktree
from agent_cli.paths import agent_home
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.forking import fork_file
from agent_cli.session.resume import restore
from agent_cli.store.branches import format_timeline, prompt_timeline
from agent_cli.store.catalog import find_session, latest_session, list_sessions
from agent_cli.store.names import set_session_name
from agent_cli.store.repair import repair_session_file
from agent_cli.store.rollout import RolloutError, SessionBusyError, load_session_file, lock_file, read_header
from agent_cli.terminal_text import terminal_safe
from agent_cli.worktrees.entering import Entered

# the first-run set-up: (arguments, config, how to load it again) -> the config to run with
SetUp = Callable[[argparse.Namespace, Config, Callable[[argparse.Namespace], Config]], Config]
Pick = Callable[[Path, Path], Path | None]  # (agent home, this directory) -> the session file picked

PICKER_SIZE = 20


# --- arguments -----------------------------------------------------------------------------


def add_resume_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--last",
        action="store_true",
        help="the most recent session started in this directory (else the most recent overall)",
    )
    parser.add_argument(
        "words", nargs="*", metavar="ARG", help="a session id or a prefix of it (unless --last), then a prompt"
    )
    parser.add_argument(
        "--fork", action="store_true", help="continue in a new session copied from it, leaving the saved one as it is"
    )
    parser.usage = "%(prog)s [options] [--fork] [--last | ID] [PROMPT]"


def build_resume_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent resume", description="Reopen a saved session in the terminal UI (a picker without --last or ID)."
    )
    add_session_options(parser)
    add_resume_arguments(parser)
    return parser


def build_sessions_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent sessions",
        description="List the sessions live in the background host, then the saved ones, most recent first. "
        "`agent sessions stop ID` ends a live one; `agent sessions repair --last | ID | FILE` keeps "
        "the lines of a damaged session file that parse, so it can be resumed; `agent sessions rename ID NAME` "
        "names one (resume it by its name); `agent sessions rm ID` deletes one; `agent sessions export ID` "
        "writes one as Markdown.",
    )
    parser.add_argument("-n", "--limit", type=int, default=30, help="how many to show (default 30; 0 = all)")
    parser.add_argument("--here", action="store_true", help="only sessions started in this directory")
    add_place_options(parser, "as if started in DIR", config_help=None)
    parser.add_argument("session", nargs="?", help="show this session's prompts, abandoned branches included")
    return parser


def split_words(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """(session reference, prompt) from the positional words; with --last there is no reference."""
    words = list(args.words)
    if args.last:
        ref = None
    else:
        ref = words.pop(0) if words else None
    if len(words) > 1:
        fail("give the prompt as one argument (quote it)")
    return ref, (words[0] if words else None)


def working_dir(args: argparse.Namespace) -> Path:
    return (Path(args.cd).expanduser() if getattr(args, "cd", None) else Path.cwd()).resolve()


# --- finding the session -------------------------------------------------------------------


def resolve_session_file(
    args: argparse.Namespace, ref: str | None, *, picker: bool, out: TextIO, pick: Pick | None = None
) -> Path:
    """The session file named by ``--last``, an id, or (if allowed) picked by the user: with
    ``pick`` (the TUI's picker, passed in by cli.py) in a terminal, else from a numbered list."""
    home = agent_home()
    if args.last:
        found = latest_session(home, working_dir(args))
        if found is None:
            fail("there is no saved session to resume")
        path, here = found
        where = "in this directory" if here else "overall (none was started in this directory)"
        print(f"agent: resuming the most recent session {where}: {path}", file=out)
        return path
    if ref is not None:
        try:
            return find_session(home, ref)
        except RolloutError as exc:
            fail(str(exc))
    if not picker:
        fail("say which session: --last or a session id (see `agent sessions`)")
    if pick is not None and sys.stdin.isatty() and sys.stdout.isatty():
        if not list_sessions(home, limit=1):
            fail("there is no saved session to resume")
        path = pick(home, working_dir(args))
        if path is None:
            raise SystemExit(0)  # left the picker: nothing to resume
        return path
    return pick_session(home, working_dir(args))


def pick_session(home: Path, cwd: Path, stdin: TextIO | None = None, out: TextIO | None = None) -> Path:
    """A numbered list on the terminal; the user types a number."""
    stdin, out = stdin or sys.stdin, out or sys.stderr
    if stdin is None or out is None or not stdin.isatty():
        fail("agent resume needs a terminal to pick a session; use --last or a session id")
    sessions = list_sessions(home, limit=PICKER_SIZE)
    if not sessions:
        fail("there is no saved session to resume")
    here = [s for s in sessions if s.cwd == str(cwd)]
    ordered = here + [s for s in sessions if s.cwd != str(cwd)]  # this directory's first
    for number, summary in enumerate(ordered, start=1):
        out.write(f"{number:>3}  {format_row(summary, width=terminal_width() - 5)}\n")
    while True:
        out.write(f"Resume which session? [1-{len(ordered)}, Enter = 1, q = quit] ")
        out.flush()
        answer = stdin.readline()
        if not answer or answer.strip().lower() in ("q", "quit"):
            raise SystemExit(0)
        choice = answer.strip() or "1"
        if choice.isdigit() and 1 <= int(choice) <= len(ordered):
            return ordered[int(choice) - 1].path


def use_recorded_model(args: argparse.Namespace, path: Path) -> None:
    """Resume with the recorded model and provider unless the command line chose others."""
    overridden = any(text.split("=", 1)[0].strip() in ("model", "model_provider") for text in args.overrides)
    if args.model or args.provider or overridden:
        return
    try:
        header = read_header(path)
    except RolloutError as exc:
        fail(str(exc))
    args.model, args.provider = header.model, header.provider


def restore_or_exit(config, path: Path, *, interactive: bool, **options: Any):
    """The session saved in ``path``; ``options`` are ``open_session``'s (the run's options...)."""
    try:
        return restore(open_session(config, interactive=interactive, **options), path)
    except RolloutError as exc:
        fail(str(exc))


# --- the commands --------------------------------------------------------------------------


def run_sessions(argv: list[str], out: TextIO | None = None) -> int:
    """`agent sessions`: time, id, size, directory and first prompt of saved sessions."""
    out = out or sys.stdout
    if out is None:  # a process without standard output: nothing to list to
        return 1
    if argv[:1] == ["repair"]:
        return run_repair(argv[1:], out)
    if argv[:1] == ["rename"]:
        return run_rename(argv[1:], out)
    if argv[:1] == ["rm"]:
        return run_rm(argv[1:], out)
    if argv[:1] == ["export"]:
        return run_export(argv[1:], out)
    if argv[:1] == ["stop"]:
        return run_stop(argv[1:], out)
    args = build_sessions_parser().parse_args(argv)
    if args.session:
        return show_session(args.session, out)
    print_live(out)  # those running in the background host first
    cwd = working_dir(args) if args.here else None
    sessions = list_sessions(agent_home(), cwd=cwd, limit=args.limit or None)
    if not sessions:
        print("no saved sessions" + (" for this directory" if args.here else ""), file=sys.stderr)
        return 0
    width = terminal_width() if out.isatty() else 160
    out.write(f"{'UPDATED':<16}  {'ID':<8}  {'SIZE':>7}  {'DIRECTORY':<28}  FIRST PROMPT\n")
    for summary in sessions:
        out.write(format_row(summary, width) + "\n")
    out.write('\nResume one with `agent resume ID` or `agent exec resume ID "PROMPT"`.\n')
    return 0


def show_session(ref: str, out: TextIO) -> int:
    """`agent sessions ID`: every prompt of the session, those a /rewind abandoned marked."""
    try:
        path = find_session(agent_home(), ref)
        timeline = prompt_timeline(path)
    except RolloutError as exc:
        fail(str(exc))
    out.write(f"{path}\n{format_timeline(timeline)}\n")
    return 0


def run_rename(argv: list[str], out: TextIO) -> int:
    """`agent sessions rename ID NAME`: resume it later with `agent resume NAME` (`--clear`: no name)."""
    parser = argparse.ArgumentParser(prog="agent sessions rename", description="Name a saved session.")
    parser.add_argument("session", metavar="ID", help="a session id, a prefix of it, or its name")
    parser.add_argument("name", nargs="*", help="the new name (the rest of the line)")
    parser.add_argument("--clear", action="store_true", help="remove its name")
    args = parser.parse_args(argv)
    if not args.name and not args.clear:
        fail("give the new name, or --clear")
    try:
        header = read_header(find_session(agent_home(), args.session))
        set_session_name(agent_home(), header.id, None if args.clear else " ".join(args.name))
    except (RolloutError, ValueError) as exc:
        fail(str(exc))
    shown = "has no name now" if args.clear else f"is now named {' '.join(' '.join(args.name).split())!r}"
    out.write(terminal_safe(f"session {header.id} {shown}") + "\n")
    return 0


def run_rm(argv: list[str], out: TextIO) -> int:
    """`agent sessions rm ID`: delete a saved session (its file, its subagents' transcripts and its
    name); refused while an agent is using it."""
    parser = argparse.ArgumentParser(prog="agent sessions rm", description="Delete a saved session.")
    parser.add_argument("session", metavar="ID", help="a session id, a prefix of it, or its name")
    args = parser.parse_args(argv)
    try:
        path = find_session(agent_home(), args.session)
        header = read_header(path)
        with lock_file(path):  # SessionBusyError while a running agent holds it
            path.unlink()
    except (RolloutError, OSError) as exc:
        fail(str(exc) if isinstance(exc, (RolloutError, SessionBusyError)) else f"cannot delete {args.session}: {exc}")
    shutil.rmtree(path.with_suffix(".agents"), ignore_errors=True)
    set_session_name(agent_home(), header.id, None)
    out.write(terminal_safe(f"deleted session {header.id} ({home_relative(path)})") + "\n")
    return 0


def build_repair_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent sessions repair",
        description="Keep the lines of a damaged session file that parse, so it can be resumed; "
        "the original stays beside it (NAME.jsonl.corrupt-TIME).",
    )
    parser.add_argument("--last", action="store_true", help="the most recent session (of this directory, if any)")
    parser.add_argument("session", nargs="?", metavar="ID|FILE", help="a session id, a prefix of it, or its file")
    return parser


def run_repair(argv: list[str], out: TextIO) -> int:
    """`agent sessions repair [--last | ID | FILE]`."""
    args = build_repair_parser().parse_args(argv)
    path = named_session(args, "repair")
    try:
        repair = repair_session_file(path)
    except RolloutError as exc:
        fail(str(exc))
    if repair.backup is None:
        out.write(f"{home_relative(path)}: every line parses; nothing to repair\n")
        return 0
    numbers = ", ".join(map(str, repair.dropped[:20])) + (" …" if len(repair.dropped) > 20 else "")
    out.write(
        f"{home_relative(path)}: left out {len(repair.dropped)} line(s) that do not parse (line {numbers}); "
        f"kept {repair.kept}. The original is {home_relative(repair.backup)}.\n"
        f'Resume it with `agent resume {path.stem}` or `agent exec resume {path.stem} "PROMPT"`.\n'
    )
    return 0


def named_session(args: argparse.Namespace, verb: str) -> Path:
    """The session file of ``--last`` or ``ID|FILE`` for `agent sessions VERB`."""
    if not args.last and not args.session:
        fail(f"name the session to {verb}: an id, a session file, or --last")
    if args.last:
        found = latest_session(agent_home(), working_dir(args))
        if found is None:
            fail(f"there is no saved session to {verb}")
        return found[0]
    return resolve_session_file(args, args.session, picker=False, out=sys.stderr)


def build_export_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent sessions export",
        description="Write a saved session as Markdown (prompts, answers, tool calls and their output folded), "
        "as /export does in the terminal UI.",
    )
    parser.add_argument("--last", action="store_true", help="the most recent session (of this directory, if any)")
    parser.add_argument("session", nargs="?", metavar="ID|FILE", help="a session id, a prefix of it, or its file")
    parser.add_argument("-o", "--output", metavar="FILE", help="write to FILE instead of standard output")
    return parser


def run_export(argv: list[str], out: TextIO) -> int:
    """`agent sessions export [--last | ID | FILE] [-o FILE]`."""
    args = build_export_parser().parse_args(argv)
    path = named_session(args, "export")
    try:
        loaded = load_session_file(path)
    except RolloutError as exc:
        fail(str(exc))
    header = loaded.header
    text = conversation_markdown(loaded.items, ExportHeader(header.id, header.model, header.cwd, header.created))
    if args.output:
        try:
            Path(args.output).write_text(text, encoding="utf-8")
        except OSError as exc:
            fail(f"cannot write {args.output}: {exc.strerror or exc}")
        print(f"agent: wrote {args.output}", file=sys.stderr)
    else:
        out.write(text)
    return 0


def prepare_resume(
    argv: list[str], set_up: SetUp | None = None, pick: Pick | None = None
) -> tuple[Config, str | None, Session, Entered | None, str | None]:
    """`agent resume [--last | ID] [PROMPT]`: the config, the prompt, the restored session the TUI
    reopens, the worktree it went back to and that worktree's set-up input (cli.py starts the TUI:
    no subcommand here imports it). ``set_up``: the first-run screen when there is no key (the
    TUI's, passed in by cli.py); ``pick``: the TUI's session picker, for no id."""
    args = build_resume_parser().parse_intermixed_args(argv)  # options before and after the id
    ref, prompt = split_words(args)
    path = fork_if_asked(args, resolve_session_file(args, ref, picker=True, out=sys.stderr, pick=pick))
    use_recorded_model(args, path)
    entered = return_to_worktree(args, path)  # a session that ran in a worktree goes on there
    config = load_config_or_exit(args)
    if set_up is not None:
        config = set_up(args, config, load_config_or_exit)
    check_api_key_or_exit(config)
    setup = prepare(entered, config, args)  # a worktree made again gets its set-up
    return config, prompt, restore_or_exit(config, path, interactive=True), entered, setup


def prepare_exec_resume(args: argparse.Namespace) -> Path:
    """For `agent exec resume`: pick the file and the model before the config is loaded.

    Moves the prompt into ``args.prompt`` (where `agent exec` reads it).
    """
    ref, args.prompt = split_words(args)
    path = fork_if_asked(args, resolve_session_file(args, ref, picker=False, out=sys.stderr))
    use_recorded_model(args, path)
    args.resumed_worktree = return_to_worktree(args, path)  # it goes on in its worktree
    return path


def fork_if_asked(args: argparse.Namespace, path: Path) -> Path:
    """With --fork: a new session file copied from ``path`` (only read), to resume instead."""
    if not getattr(args, "fork", False):
        return path

    try:
        forked = fork_file(agent_home(), path)
    except (RolloutError, OSError) as exc:
        fail(f"cannot fork {path}: {exc}")
    print(f"agent: forked {path} into {forked}", file=sys.stderr)
    return forked


# --- formatting ----------------------------------------------------------------------------


def terminal_width() -> int:
    try:
        return os.get_terminal_size().columns
    except OSError:
        return 120


def format_row(summary, width: int = 120) -> str:
    updated = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.updated))
    prompt = " ".join((summary.first_prompt or "(no prompt yet)").split())
    if getattr(summary, "name", None):
        prompt = f"[{summary.name}] {prompt}"
    folder = short_path(summary.cwd)
    if worktree := getattr(summary, "worktree", None):  # where it ran: its repository @ the worktree
        label = f"@{worktree.get('name', '?')}"
        folder = short_path(worktree.get("repository", ""), limit=27 - len(label)) + " " + label
    head = f"{updated:<16}  {summary.short_id:<8}  {human_size(summary.size):>7}  {folder:<28}  "
    room = max(20, width - len(head))
    if len(prompt) > room:
        prompt = prompt[: room - 1] + "…"
    return terminal_safe(head + prompt)  # a prompt may hold escape sequences (`agent exec "$(cat x)"`)
