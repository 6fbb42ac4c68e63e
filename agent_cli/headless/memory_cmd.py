"""``agent memory list|add|forget|search|export|import``: the memory stores, for scripts.

Export writes JSON lines on stdout (or ``-o FILE``); import reads them from a file or stdin
(``-``). Exit codes: 0 done, 1 something was refused or not found, 2 usage error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TextIO

from agent_cli.arguments import add_place_options
from agent_cli.commands.memory_command import format_list, format_memory
from agent_cli.memory.book import MemoryBook
from agent_cli.memory.model import MemoryError
from agent_cli.memory.transfer import export_lines, import_lines
from agent_cli.paths import agent_home

SCOPE_CHOICES = ("project", "user", "session")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent memory", description="What the agent remembers across sessions.")
    add_place_options(parser, "the project is the git root of DIR (default: here)", config_help=None)
    actions = parser.add_subparsers(dest="action", required=True)
    listing = actions.add_parser("list", help="newest first, per scope, with ids")
    listing.add_argument("--scope", choices=SCOPE_CHOICES[:2])
    listing.add_argument("-n", "--limit", type=int, default=0, help="per scope (default: all)")
    add = actions.add_parser("add", help="save a memory")
    add.add_argument("text")
    add.add_argument("--scope", choices=SCOPE_CHOICES[:2], default="project")
    add.add_argument("--tag", dest="tags", action="append", default=[], help="repeatable")
    add.add_argument("--confidence", type=float)
    forget = actions.add_parser("forget", help="delete memories by id (u3, p12)")
    forget.add_argument("ids", nargs="+")
    search = actions.add_parser("search", help="memories matching a query, best first")
    search.add_argument("query")
    search.add_argument("--scope", choices=SCOPE_CHOICES[:2])
    search.add_argument("-n", "--limit", type=int, default=10)
    export = actions.add_parser("export", help="JSON lines on stdout")
    export.add_argument("--scope", choices=SCOPE_CHOICES[:2])
    export.add_argument("-o", "--output", metavar="FILE")
    load = actions.add_parser("import", help="JSON lines from FILE or - (stdin)")
    load.add_argument("file")
    load.add_argument("--scope", choices=SCOPE_CHOICES[:2], help="put every memory in this scope")
    return parser


def run_memory(argv: list[str], out: TextIO | None = None, err: TextIO | None = None) -> int:
    stdout: TextIO = out or sys.stdout
    stderr: TextIO = err or sys.stderr
    args = build_parser().parse_args(argv)
    cwd = Path(args.cd).expanduser().resolve() if args.cd else Path.cwd()
    if not cwd.is_dir():
        print(f"agent memory: error: {cwd} is not a directory", file=stderr)
        return 2
    book = MemoryBook(agent_home(), cwd)
    scopes = (args.scope,) if getattr(args, "scope", None) and args.action != "add" else SCOPE_CHOICES[:2]
    status = 0
    try:
        if args.action == "list":
            print(format_list(book, scopes, args.limit or None), file=stdout)
        elif args.action == "add":
            saved = book.save(args.text, args.scope, tags=args.tags, confidence=args.confidence, source="user")
            print(f"{'updated' if saved.updated else 'saved'} {saved.memory.ref}", file=stdout)
        elif args.action == "forget":
            for ref in args.ids:
                try:
                    print(f"forgot {book.forget(ref).ref}", file=stdout)
                except MemoryError as exc:
                    print(f"agent memory: {exc}", file=stderr)
                    status = 1
        elif args.action == "search":
            if not args.query.strip():
                print("agent memory: error: search needs words to look for", file=stderr)
                return 2
            for item in book.search(args.query, scopes, limit=args.limit):
                print(f"{format_memory(item.memory).strip()}  (score {item.score:.2f})", file=stdout)
        elif args.action == "export":
            target = open(args.output, "w", encoding="utf-8") if args.output else stdout  # noqa: SIM115
            try:
                for line in export_lines(book, scopes):
                    print(line, file=target)
            finally:
                if target is not stdout:
                    target.close()
        elif args.action == "import":
            source = sys.stdin if args.file == "-" else open(args.file, encoding="utf-8")  # noqa: SIM115
            with source:
                report = import_lines(book, source, args.scope)
            print(
                f"imported: {report.added} added, {report.updated} updated, {len(report.problems)} refused", file=stdout
            )
            for problem in report.problems:
                print(f"  {problem}", file=stderr)
            status = 1 if report.problems else 0
    except MemoryError as exc:
        print(f"agent memory: {exc}", file=stderr)
        status = 1
    except OSError as exc:
        print(f"agent memory: error: {exc.filename or ''}: {exc.strerror}", file=stderr)
        status = 2
    finally:
        for warning in book.take_warnings():
            print(f"agent memory: warning: {warning}", file=stderr)
        book.close()
    return status
