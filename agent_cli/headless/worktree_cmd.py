"""Worktrees on the command line: ``-w/--worktree [NAME] [--base REF]`` of ``agent`` and
``agent exec`` (entering one before the config is loaded, setting it up after), what happens when
the session ends, and ``agent worktree list|rm|prune``. The git work is agent_cli/worktrees/."""

from __future__ import annotations

import argparse
import atexit
import contextlib
import sys
from pathlib import Path
from typing import TextIO

from agent_cli.arguments import session_flags
from agent_cli.commands.worktree_commands import carry_trust
from agent_cli.config import ConfigError, load_config, without_repository_settings
from agent_cli.headless.common import fail
from agent_cli.paths import agent_home
from agent_cli.store.rollout import RolloutError, read_header
from agent_cli.terminal_text import terminal_safe
from agent_cli.trust.gate import trust_state
from agent_cli.worktrees.entering import Entered, GitError, Left, leave_worktree, open_worktree, return_to, set_up
from agent_cli.worktrees.settings import WorktreeSettings
from agent_cli.worktrees.store import (
    Worktree,
    check_name,
    find,
    held_worktrees,
    in_use,
    list_worktrees,
    prune,
    remove,
    repository_of,
    state,
)

# --- entering ------------------------------------------------------------------------------


def worktree_request(args: argparse.Namespace) -> tuple[str | None, str | None] | None:
    """(name or None for a generated one, base) when ``--worktree`` was given. ``agent -w "fix the
    tests"`` (no prompt, and no valid name): the words are the prompt and the name is generated."""
    value = getattr(args, "worktree", None)
    base = getattr(args, "base", None)
    if value is None:
        if base is not None:
            fail("--base needs --worktree")
        return None
    if not value:
        return None, base
    try:
        return check_name(value), base
    except ValueError as exc:
        if getattr(args, "prompt", "") is None and any(c.isspace() for c in value):
            args.prompt = value
            return None, base
        fail(str(exc))
    return None  # pragma: no cover - fail() exits


def enter_from_args(args: argparse.Namespace, out: TextIO | None = None) -> Entered | None:
    """With ``--worktree``: create or resume it and point ``args.cd`` there (before the config is
    loaded, so the session starts in it). Says where on ``out`` (stderr)."""
    request = worktree_request(args)
    if request is None:
        return None
    out = out or sys.stderr
    cwd = Path(args.cd).expanduser() if getattr(args, "cd", None) else Path.cwd()
    try:
        entered = open_worktree(*request, cwd=cwd)
    except (GitError, ValueError) as exc:
        fail(f"--worktree: {exc}")
    args.cd = str(entered.cwd)
    print(f"agent: {terminal_safe(entered.line())}", file=out)
    for warning in entered.warnings:
        print(f"agent: warning: {terminal_safe(warning)}", file=out)
    if entered.created:  # a usage error before the session starts leaves no empty worktree behind
        atexit.register(drop_if_unused, entered.worktree)
    return entered


def drop_if_unused(worktree: Worktree) -> None:
    """At exit: a worktree made for a run that never started (still clean) goes again."""
    with contextlib.suppress(GitError, OSError):
        if worktree.exists and state(worktree).clean:
            remove(agent_home(), worktree)


def return_to_worktree(args: argparse.Namespace, path: Path) -> Entered | None:
    """Resuming a session that ran in a worktree goes back there (made again from its branch, or
    anew, when it was removed since), unless ``-C`` says where."""
    if getattr(args, "cd", None):
        return None
    try:
        header = read_header(path)
    except RolloutError:
        return None  # the resume itself says what is wrong with the file
    try:
        entered = return_to(header.worktree, header.cwd)
    except (GitError, ValueError) as exc:
        name = (header.worktree or {}).get("name", "?")
        print(f"agent: warning: cannot go back to worktree {name}: {terminal_safe(str(exc))}", file=sys.stderr)
        return None
    if entered is None:
        return None
    args.cd = str(entered.cwd)
    if entered.created:  # it was removed since: made again (from its kept branch, if any)
        print(f"agent: {terminal_safe(entered.line())}", file=sys.stderr)
        atexit.register(drop_if_unused, entered.worktree)
    else:
        worktree = entered.worktree
        print(f"agent: in worktree {worktree.name} (branch {worktree.branch}): {entered.cwd}", file=sys.stderr)
    return entered


def prepare(entered: Entered | None, config, args: argparse.Namespace, out: TextIO | None = None) -> str | None:
    """After the config of the worktree is loaded: the trust answer of the checkout it was made
    from carries over (same content), the ignored files ``[worktree] copy`` names are copied into
    a new one, and its ``setup`` command is returned for the front end to run first (a
    ``ShellCommand``). None when there is nothing to run."""
    if entered is None:
        return None
    out = out or sys.stderr
    for line in set_up(entered, ()):  # the user's local rules first: the trust answer compares them too
        print(f"agent: {terminal_safe(line)}", file=out)
    inherit_trust(entered, config, args)
    if any(layer.kind == "project" and "worktree" in layer.table for layer in config.layers):
        if not trust_state(config).trusted:
            print("agent: warning: the repository's [worktree] settings wait until it is trusted", file=out)
            config = without_repository_settings(config)
    settings = WorktreeSettings.from_raw(config.raw)
    for line in set_up(entered, settings.copy):
        print(f"agent: {terminal_safe(line)}", file=out)
    return settings.setup if entered.created and settings.setup else None


def inherit_trust(entered: Entered, config, args: argparse.Namespace) -> None:
    """The trust answer of the checkout the worktree was made from carries over (same content)."""
    if entered.source is None:
        return
    try:
        source = load_config(entered.source, args.overrides, session_flags(args))
    except ConfigError:
        return
    carry_trust(source, config)


# --- leaving -------------------------------------------------------------------------------


def leave_after_exec(entered: Entered | None, renderer=None, out: TextIO | None = None) -> Left | None:
    """`agent exec` ends: a worktree with no change and no commit is removed with its branch;
    any other is kept, and its path and branch are said on stderr (and in ``--json`` as a
    ``worktree.kept`` / ``worktree.removed`` line)."""
    if entered is None:
        return None
    out = out or sys.stderr
    atexit.unregister(drop_if_unused)
    try:
        left = leave_worktree(entered.worktree)
    except GitError as exc:
        print(f"agent: warning: worktree {entered.worktree.path}: {terminal_safe(str(exc))}", file=out)
        return None
    print(f"agent: {terminal_safe(left.message)}", file=out)
    if renderer is not None and hasattr(renderer, "emit"):  # the JSON renderer
        renderer.emit(
            "worktree.removed" if left.removed else "worktree.kept",
            worktree=entered.worktree.describe(),
            uncommitted_changes=len(left.state.changed) if left.state else 0,
            commits=left.state.commits if left.state else 0,
        )
    return left


def leave_after_tui(entered: Entered | None, stdin: TextIO | None = None, out: TextIO | None = None) -> None:
    """The TUI has closed: each worktree it worked in (``-w``, ``/worktree``, a subagent's kept
    one) is removed when clean; for a changed one the user chooses (kept without a terminal)."""
    atexit.unregister(drop_if_unused)
    stdin, out = stdin or sys.stdin, out or sys.stderr
    seen: set[Path] = set()
    for worktree in ([entered.worktree] if entered is not None else []) + held_worktrees():
        if worktree.path not in seen and worktree.exists:
            seen.add(worktree.path)
            leave_one(worktree, stdin, out)


def leave_one(worktree: Worktree, stdin: TextIO, out: TextIO) -> None:
    try:
        current = state(worktree)
        if current.clean or not stdin.isatty() or in_use(agent_home(), worktree):
            print(f"agent: {terminal_safe(leave_worktree(worktree).message)}", file=out)
            return
        out.write(
            terminal_safe(
                f"Worktree {worktree.name} has {current.summary()} (branch {worktree.branch}, {worktree.path})."
            )
            + "\nKeep it? [K]eep / [r]emove (uncommitted changes are lost; commits stay on the branch) "
        )
        out.flush()
        answer = stdin.readline().strip().lower()
        if answer in ("r", "remove"):
            print(f"agent: {terminal_safe(remove(agent_home(), worktree, force=True))}", file=out)
        else:
            print(
                terminal_safe(f"agent: kept worktree {worktree.name}: {worktree.path}, branch {worktree.branch}"),
                file=out,
            )
    except GitError as exc:
        print(f"agent: warning: worktree {worktree.path}: {terminal_safe(str(exc))}", file=out)


# --- agent worktree list | rm | prune --------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent worktree", description="The agent's git worktrees of this repository.")
    parser.add_argument("-C", "--cd", metavar="DIR", help="as if started in DIR")
    commands = parser.add_subparsers(dest="command", required=True)
    listing = commands.add_parser("list", help="the worktrees, their branches and changes")
    listing.add_argument("--all", action="store_true", help="of every repository")
    removal = commands.add_parser("rm", help="remove a worktree (and its branch when it holds no commit)")
    removal.add_argument("name")
    removal.add_argument("-f", "--force", action="store_true", help="even with uncommitted changes (they are lost)")
    commands.add_parser("prune", help="forget worktrees whose folder was deleted")
    return parser


def run_worktree(argv: list[str], out: TextIO | None = None) -> int:
    out = out or sys.stdout
    args = build_parser().parse_args(argv)
    cwd = Path(args.cd).expanduser().resolve() if args.cd else Path.cwd()
    home = agent_home()
    try:
        main = None if getattr(args, "all", False) else repository_of(cwd).main
        if args.command == "list":
            return list_command(home, main, out)
        if args.command == "rm":
            worktree = find(home, main, check_name(args.name))
            if worktree is None:
                fail(f"no worktree named {args.name} in {main} (see `agent worktree list`)")
            out.write(remove(home, worktree, force=args.force) + "\n")
            return 0
        done = prune(home, main)
        out.write("\n".join(done) + "\n" if done else "nothing to prune\n")
        return 0
    except (GitError, ValueError) as exc:
        print(f"agent: error: {terminal_safe(str(exc))}", file=sys.stderr)
        return 1


def list_command(home: Path, main: Path | None, out: TextIO) -> int:
    worktrees = list_worktrees(home, main)
    if not worktrees:
        print("no worktrees" + (f" of {main}" if main else ""), file=sys.stderr)
        return 0
    out.write(f"{'NAME':<24}  {'BRANCH':<30}  {'STATE':<32}  PATH\n")
    for worktree in worktrees:
        try:
            shown = state(worktree).summary() if worktree.exists else "folder gone (prune)"
        except GitError as exc:
            shown = f"? ({exc})"
        out.write(terminal_safe(f"{worktree.name:<24}  {worktree.branch:<30}  {shown:<32}  {worktree.path}") + "\n")
    return 0
