"""`agent exec`'s own options: ours and `codex exec`'s, so automation written for Codex (its
command line, and the Codex SDKs that start `codex exec --experimental-json`) runs unchanged."""

from __future__ import annotations

import argparse

NOT_A_REPOSITORY = (
    "accepted for `codex exec` compatibility and changes nothing: agent exec runs in any "
    "directory, git repository or not"
)


def add_exec_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--json",
        "--experimental-json",
        dest="json",
        action="store_true",
        help="print events as JSON lines on stdout (Codex's exec event schema)",
    )
    parser.add_argument("-o", "--output-last-message", metavar="FILE", help="write the last agent message to FILE")
    parser.add_argument(
        "-i",
        "--image",
        dest="images",
        action="append",
        default=[],
        metavar="FILE",
        help="attach an image to the prompt (repeatable)",
    )
    parser.add_argument(
        "--add-dir",
        dest="add_dirs",
        action="append",
        default=[],
        metavar="DIR",
        help="another directory commands may write to (repeatable)",
    )
    parser.add_argument("--skip-git-repo-check", action="store_true", help=NOT_A_REPOSITORY)
    parser.add_argument(
        "--output-schema",
        metavar="FILE",
        help="a JSON Schema the final answer must validate against (the answer is that JSON)",
    )
    parser.add_argument(
        "--color",
        choices=("always", "never", "auto"),
        default="auto",
        help="colours in the progress on stderr (default auto: when stderr is a terminal)",
    )
    parser.add_argument(
        "--full-auto",
        action="store_true",
        help="as in codex exec: the workspace-write sandbox (agent exec never asks anyway)",
    )
    parser.add_argument(
        "--dangerously-bypass-approvals-and-sandbox",
        "--yolo",
        dest="bypass_sandbox",
        action="store_true",
        help="no sandbox and no approvals: only inside a disposable container",
    )
    parser.add_argument("--max-turns", type=positive_int, metavar="N", help="stop after N model requests (exit code 4)")
    parser.add_argument(
        "--max-budget-usd",
        type=positive_float,
        metavar="USD",
        help="stop once the estimated cost reaches USD (exit code 5; needs a known price)",
    )
    parser.add_argument("--ephemeral", action="store_true", help="keep no session file (nothing to resume)")
    parser.add_argument(
        "--trust",
        action="store_true",
        help="run this repository's own MCP servers, hooks and plugins, and apply its allow rules",
    )
    parser.add_argument("--no-daemon", action="store_true", help="start cold: no warm server (also AGENT_NO_DAEMON=1)")
    parser.add_argument("--thread-source", help=argparse.SUPPRESS)  # the Codex SDK's label: nothing to do with it


def apply_sandbox_shortcuts(args: argparse.Namespace) -> None:
    """``--full-auto`` and ``--dangerously-bypass-approvals-and-sandbox`` as the flags they stand for."""
    if getattr(args, "bypass_sandbox", False):
        args.sandbox, args.approval = "danger-full-access", "never"
    elif getattr(args, "full_auto", False) and not args.sandbox:
        args.sandbox = "workspace-write"


def positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1; got {text}")
    return value


def positive_float(text: str) -> float:
    value = float(text)
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a positive number; got {text}")
    return value
