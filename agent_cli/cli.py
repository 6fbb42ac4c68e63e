"""The commands of `agent`: parse arguments and hand off to a front end. It imports every front
end; the `agent` command starts in the launcher (__main__.py), which loads this module only when
a command needs the program."""

from __future__ import annotations

import argparse
import os
import sys

from agent_cli.acp.main import run_acp
from agent_cli.app_server.main import run_app_server
from agent_cli.arguments import SUBCOMMANDS, add_session_options, add_worktree_options, build_tui_parser
from agent_cli.batch.main import run_batch
from agent_cli.headless import sessions_cmd
from agent_cli.headless.common import check_api_key_or_exit, fail, load_config_or_exit
from agent_cli.headless.doctor_cmd import run_doctor
from agent_cli.headless.exec import exit_now, run_exec
from agent_cli.headless.exec_options import add_exec_options
from agent_cli.headless.host_cmd import run_background
from agent_cli.headless.login_cmd import run_login, run_logout
from agent_cli.headless.mcp_cmd import run_mcp
from agent_cli.headless.memory_cmd import run_memory
from agent_cli.headless.plugin_cmd import run_plugin
from agent_cli.headless.sessions_cmd import add_resume_arguments
from agent_cli.headless.undo_cmd import run_undo
from agent_cli.headless.worktree_cmd import enter_from_args, leave_after_tui, prepare, run_worktree
from agent_cli.stream_json.flags import wants_stream_json
from agent_cli.stream_json.main import run_stream_json

HEADLESS_COMMANDS = {"login": run_login, "logout": run_logout, "doctor": run_doctor}
BROKEN_PIPE = 141  # 128 + SIGPIPE, what a shell reports for a writer whose reader left


def build_exec_parser(resume: bool = False) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent exec",
        description="Run the agent without a screen.",
        epilog="Continue a saved session: agent exec resume [--last | ID] [OPTIONS] [PROMPT]",
    )
    add_session_options(parser)
    add_exec_options(parser)
    if not resume:
        add_worktree_options(parser)
    if resume:  # agent exec resume [--last | ID] [PROMPT]
        parser.prog = "agent exec resume"
        add_resume_arguments(parser)
        parser.set_defaults(resume=True)
    else:
        parser.add_argument("prompt", nargs="?", help="the prompt; '-' or nothing reads it from piped stdin")
    return parser


def parse_exec_args(argv: list[str]) -> argparse.Namespace:
    """`agent exec [OPTIONS] [PROMPT]` or `agent exec [OPTIONS] resume [OPTIONS] [--last | ID]
    [PROMPT]`: as in Codex, exec's options may come before and after `resume`."""
    parser = build_exec_parser()
    at = resume_position(parser, argv)
    if at is None:
        return parser.parse_args(argv)
    return build_exec_parser(resume=True).parse_intermixed_args(argv[:at] + argv[at + 1 :])


def resume_position(parser: argparse.ArgumentParser, argv: list[str]) -> int | None:
    """Where `resume` stands as exec's first positional word (skipping options and their
    values), or None when the first positional word is something else: a prompt."""
    options = parser._option_string_actions  # argparse has no public lookup by option string
    at = 0
    while at < len(argv):
        word = argv[at]
        if word == "--" or not word.startswith("-") or word == "-":
            return at if word == "resume" else None
        action = options.get(word)  # `--model=x` and `-mx` carry their value in the word
        at += 2 if action is not None and action.nargs != 0 else 1
    return None


def main(argv: list[str] | None = None) -> int:
    try:
        return dispatch(list(sys.argv[1:] if argv is None else argv))
    except BrokenPipeError:
        # Whoever read our output went away (`agent exec --json | head -1`): stop quietly, as
        # Unix tools do, and keep Python from complaining again when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return BROKEN_PIPE


def subcommand_first(argv: list[str]) -> list[str]:
    """``agent --provider X -m Y resume --last`` as ``agent resume --provider X -m Y --last``: the
    global options may come before a subcommand too, and its name is never taken for a prompt."""
    options = build_tui_parser()._option_string_actions  # argparse has no public lookup by option string
    at = 0
    while at < len(argv):
        word = argv[at]
        if word == "--" or not word.startswith("-") or word == "-":
            if word in SUBCOMMANDS and at > 0:
                return [word, *argv[:at], *argv[at + 1 :]]
            return argv
        action = options.get(word)  # `--model=x` and `-mx` carry their value in the word
        at += 2 if action is not None and action.nargs != 0 else 1
    return argv


def dispatch(argv: list[str]) -> int:
    argv = subcommand_first(argv)
    if argv[:2] == ["exec", "undo"]:
        return run_undo(argv[2:])
    if argv and argv[0] == "exec":  # the launcher paused the garbage collector (__main__.py)
        exit_now(run_exec(parse_exec_args(argv[1:])))
    if argv and argv[0] == "plugin":
        return run_plugin(argv[1:])
    if argv and argv[0] == "batch":
        return run_batch(argv[1:])
    if argv and argv[0] == "sessions":
        return sessions_cmd.run_sessions(argv[1:])
    if argv and argv[0] == "resume":  # the TUI on a saved session
        from agent_cli.tui.first_run import set_up_if_needed  # no key: the set-up screen, as for `agent`
        from agent_cli.tui.resume_picker import pick_session_to_resume  # no id: the app's picker

        config, prompt, session, entered, setup = sessions_cmd.prepare_resume(
            argv[1:], set_up_if_needed, pick_session_to_resume
        )
        from agent_cli.tui.app import run_app

        status = run_app(config, prompt, session=session, setup=setup)
        leave_after_tui(entered)  # a session that went back to its worktree: keep it or not
        exit_now(status)  # without the interpreter's teardown of the app's widgets (seconds after a long answer)
    if argv and argv[0] == "attach":  # the app on a live session of a host
        from agent_cli.tui.hosting import run_attach

        exit_now(run_attach(argv[1:]))
    if argv and (argv[0] == "acp" or "--acp" in argv):
        return run_acp(argv[1:] if argv[0] == "acp" else [word for word in argv if word != "--acp"])
    if argv and argv[0] == "app-server":
        return run_app_server(argv[1:])
    if argv and argv[0] == "mcp":
        return run_mcp(argv[1:])
    if argv and argv[0] == "memory":
        return run_memory(argv[1:])
    if wants_stream_json(argv):  # `agent -p`, the Claude Agent SDK: Claude's flags, its own parser
        return run_stream_json(argv)
    if argv and argv[0] == "worktree":
        return run_worktree(argv[1:])
    if argv and argv[0] in HEADLESS_COMMANDS:
        return HEADLESS_COMMANDS[argv[0]](argv[1:])
    args = build_tui_parser().parse_args(argv)
    if args.bg:  # the session starts in the background host; this command only prints its id
        return run_background(args)
    if args.remote:
        if args.worktree is not None:
            fail("--worktree with --remote: the host works in its own folders; give -C DIR (or agent --bg -w NAME)")
        from agent_cli.tui.hosting import run_remote

        exit_now(run_remote(args))
    if args.remote_auth_token_env or args.no_worktree:
        fail("--remote-auth-token-env goes with --remote, --no-worktree with --bg")
    entered = enter_from_args(args)  # -w/--worktree: the session starts in it
    from agent_cli.tui.first_run import set_up_if_needed  # Textual, which `agent exec` never loads

    config = set_up_if_needed(args, load_config_or_exit(args), load_config_or_exit)  # first run
    check_api_key_or_exit(config)
    setup = prepare(entered, config, args)
    from agent_cli.tui.app import run_app

    status = run_app(config, args.prompt, inline=args.inline, setup=setup)
    leave_after_tui(entered)
    exit_now(status)  # freeing a long session's widgets one by one took seconds, with nobody waiting
