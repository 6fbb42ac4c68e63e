"""`agent exec undo [--last | SESSION]`: restore the files to the last checkpoint of a saved session.

Headless, so it does not ask: it prints the diff it takes back (on stderr) and restores. Files
changed by hand since the turn are left as they are and named; the exit status is then 3. The
session file gets the same lines /undo writes (the checkpoint is used up, and the model, when
the session is resumed, reads which files went back).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from agent_cli.arguments import add_place_options
from agent_cli.checkpoints.gitcmd import CheckpointError
from agent_cli.checkpoints.ledger import Ledger, plan_for
from agent_cli.checkpoints.restore import apply_restore
from agent_cli.context.fragments import FILES_RESTORED
from agent_cli.headless.common import fail
from agent_cli.headless.sessions_cmd import resolve_session_file, working_dir
from agent_cli.items import user
from agent_cli.paths import agent_home
from agent_cli.session.checkpointing import restored_note
from agent_cli.store.catalog import latest_session
from agent_cli.store.rollout import RolloutError, RolloutWriter, read_header

NOTHING_TO_UNDO = 1
CONFLICTS = 3


def build_undo_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agent exec undo",
        description="Restore the files to the checkpoint before a session's last turn that changed them.",
    )
    parser.add_argument("--last", action="store_true", help="the most recent session of this directory (the default)")
    parser.add_argument("session", nargs="?", help="a session id (or a prefix of it), or a session file")
    add_place_options(parser, "as if started in DIR", config_help=None)
    parser.add_argument("--json", action="store_true", help="print the outcome as one JSON line on stdout")
    return parser


def run_undo(argv: list[str]) -> int:
    args = build_undo_parser().parse_args(argv)
    if args.last and args.session:
        fail("give --last or a session, not both")
    path = (
        latest_here(args)
        if args.session is None
        else resolve_session_file(args, args.session, picker=False, out=sys.stderr)
    )
    try:
        writer = RolloutWriter(path, read_header(path))
        loaded = writer.continue_file(path)  # locked: a running agent on this session is refused
    except RolloutError as exc:
        fail(str(exc))
    try:
        ledger = Ledger()
        for record in loaded.checkpoints:
            ledger.replay(record)
        checkpoints = ledger.last()
        if not checkpoints:
            print(f"agent: nothing to undo in {path}: no turn changed files since the last undo", file=sys.stderr)
            return NOTHING_TO_UNDO
        with tempfile.TemporaryDirectory(prefix="agent-undo-") as scratch:
            try:
                plan = plan_for(checkpoints, Path(scratch) / "index")
                if plan.changes:
                    print(f"{plan.summary()}\n\n{plan.diff}", file=sys.stderr)
                restored = apply_restore(plan)
            except CheckpointError as exc:
                fail(f"cannot undo: {exc}")
        writer.append_checkpoint("checkpoint_undone", ids=[c.id for c in checkpoints])
        if restored or plan.conflicts:
            writer.append_item(user(FILES_RESTORED.wrap(restored_note(checkpoints, restored, plan.conflicts))))
    finally:
        writer.close()
    if args.json:
        print(
            json.dumps(
                {
                    "type": "rewound",
                    "mode": "undo",
                    "session": loaded.header.id,
                    "restored": restored,
                    "conflicts": plan.conflicts,
                    "skipped": plan.skipped,
                }
            )
        )
    else:
        for name in restored:
            print(name)
    if plan.conflicts:
        print(f"agent: not restored, changed by hand since the turn: {', '.join(plan.conflicts)}", file=sys.stderr)
        return CONFLICTS
    return 0


def latest_here(args: argparse.Namespace) -> Path:
    """The most recent session started in this directory (never one of another directory)."""
    here = working_dir(args)
    found = latest_session(agent_home(), here)
    if found is None or not found[1]:
        fail(f"no session was started in {here}; name one (see `agent sessions`)")
    return found[0]
