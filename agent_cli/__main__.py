"""The `agent` command (and `python -m agent_cli`): a launcher that answers `agent --help` and
`agent --version` without loading the program, hands `agent exec` to a warm server when one
runs (agent_cli/warm/), pauses the garbage collector before `agent exec`
loads it (startup_gc.py), then hands over to cli.py, which imports every front end.

Nothing imports this module, so the one import inside ``main`` cannot hide a cycle
(tests/tui/test_imports.py allows exactly it)."""

from __future__ import annotations

import sys

from agent_cli import startup_gc
from agent_cli.arguments import build_tui_parser
from agent_cli.warm import client as warm

ANSWERED_HERE = ("--version", "-h", "--help")  # as the first word: `agent --help`, not `agent exec --help`


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv[:1] and argv[0] in ANSWERED_HERE:
        build_tui_parser().parse_args(argv)  # prints the help or the version and exits, as cli.py would
    if warm.wanted(argv) and (status := warm.run(argv)) is not None:
        return status  # a child of the warm server ran it (agent_cli/warm/)
    if argv[:1] == ["exec"] and argv[1:2] != ["undo"]:
        startup_gc.pause()  # before the program loads, until the first model request is ready
    if argv[:1] == ["batch"]:  # it starts `agent exec` processes: it needs none of the program itself
        from agent_cli.batch.main import run_batch

        return run_batch(argv[1:])
    from agent_cli import cli  # the program: every front end and the session core

    return cli.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
