"""Front ends drive sessions with operations, read on the source as tests/tui/test_imports.py reads
imports: no front end writes a command line to send (``"/mode plan"``, ``f"/rewind {n} code"``,
``f"!{setup}"``) or calls the typed-text router, and nothing outside ``session/`` writes into a
session's parts (``session.approvals.policy = ...``, ``session.hooks.table[...] = ...``,
``approvals.session_approved.add(...)`` on a part taken from a session). See operations.py and
commands/conversation.py: a front end sends ``SetMode("plan")``, the parts change through methods.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path

from agent_cli.commands.builtins import BUILTINS
from tests.conftest import REPO

SOURCE = REPO / "agent_cli"
# The front ends, and what assembles and checks sessions for them.
FRONT_ENDS = ("tui", "headless", "acp", "stream_json", "app_server", "remote", "warm", "doctor", "cli.py", "runtime.py")
COMMAND_NAMES = sorted({name for builtin in BUILTINS for name in (builtin.name, *builtin.aliases)}, key=len)
PLACEHOLDER = "\0"  # an f-string's {...}
# A whole command line: the command, then placeholders or option-like words (never a sentence).
COMMAND_LINE = re.compile(
    rf"/({'|'.join(map(re.escape, reversed(COMMAND_NAMES)))})(\s+({PLACEHOLDER}|[\w.:/@=-]+))*\s*"
    rf"|!({PLACEHOLDER}|[a-z]).*",
    re.DOTALL,
)
# What reads typed text as commands, and must not be handed text a front end wrote.
TEXT_ROUTER = {("agent_cli.commands.dispatch", name) for name in ("submit", "route", "submit_beside", "run_input")}
TEXT_ROUTER.add(("agent_cli.commands.conversation", "submit"))  # typed text, for tests and scripts
# Calls that change a container in place: a part's data written from outside.
MUTATORS = {"add", "discard", "append", "extend", "insert", "remove", "pop", "clear", "update", "setdefault"}
# Where a session comes from, when a variable holds one under another name.
SESSION_MAKERS = {"open_session", "open_child", "restore", "restore_or_exit", "Session", "interactive_session"}


def python_files(*under: str) -> list[Path]:
    return sorted(
        path
        for path in SOURCE.rglob("*.py")
        if not under or path.relative_to(SOURCE).parts[0] in under or path.relative_to(SOURCE).as_posix() in under
    )


def where(path: Path, node: ast.AST) -> str:
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path.name
    return f"{shown}:{getattr(node, 'lineno', 0)}"


# --- text commands ------------------------------------------------------------------------------


def literal_text(node: ast.AST) -> str | None:
    """A string constant's text, or an f-string's with its placeholders marked."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr):
        return "".join(part.value if isinstance(part, ast.Constant) else PLACEHOLDER for part in node.values)
    return None


def docstrings(tree: ast.Module) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, kinds) and node.body and isinstance(node.body[0], ast.Expr)
    }


def text_commands(path: Path) -> list[str]:
    """Command lines written in ``path`` (an f-string's parts are not counted on their own)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    skip = docstrings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            skip.update(id(part) for part in node.values)
    found = []
    for node in ast.walk(tree):
        text = literal_text(node)
        if id(node) not in skip and text is not None and COMMAND_LINE.fullmatch(text):
            found.append(f"{where(path, node)} {text.replace(PLACEHOLDER, '{…}')!r}")
    return found


def text_router_calls(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [
                f"{where(path, node)} imports {node.module}.{alias.name}"
                for alias in node.names
                if (node.module, alias.name) in TEXT_ROUTER
            ]
    return found


def test_front_ends_send_operations_never_command_text():
    offenders = [found for path in python_files(*FRONT_ENDS) for found in text_commands(path)]
    offenders += [found for path in python_files(*FRONT_ENDS) for found in text_router_calls(path)]
    assert not offenders, f"{len(offenders)} command line(s) sent as text by front ends:\n" + "\n".join(offenders)


def test_the_command_line_pattern_tells_a_command_from_a_message():
    for command in ("/mode plan", f"/rewind {PLACEHOLDER} code --yes", "/new", f"!{PLACEHOLDER}", "!make test"):
        assert COMMAND_LINE.fullmatch(command), command
    for message in ("/resume needs the TUI; use agent exec resume", "/usr/bin/env", "! shell command", "!I", "/tmp"):
        assert not COMMAND_LINE.fullmatch(message), message


# --- writes into a session's parts --------------------------------------------------------------


@dataclass(frozen=True)
class Reach:
    """How an expression reaches into a session: the members after it (empty: the session itself)."""

    members: tuple[str, ...]


def is_session_type(annotation: ast.expr | None) -> bool:
    return annotation is not None and re.search(r"\bSession\b", ast.unparse(annotation)) is not None


def called_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Call):
        func = node.func
        return func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    return None


class PartWrites(ast.NodeVisitor):
    """Per function: which names hold a session or one of its parts, then what is written through them."""

    def __init__(self, path: Path):
        self.path = path
        self.found: list[str] = []

    def visit_FunctionDef(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        arguments = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
        held: dict[str, Reach] = {arg.arg: Reach(()) for arg in arguments if is_session_type(arg.annotation)}
        for inner in ast.walk(node):  # aliases, in the order written
            if isinstance(inner, ast.Assign) and len(inner.targets) == 1 and isinstance(inner.targets[0], ast.Name):
                name = inner.targets[0].id
                if called_name(inner.value) in SESSION_MAKERS:
                    held[name] = Reach(())
                elif (reach := self.reach(inner.value, held)) is not None:
                    held[name] = reach
            elif isinstance(inner, ast.AnnAssign) and isinstance(inner.target, ast.Name):
                if is_session_type(inner.annotation):
                    held[inner.target.id] = Reach(())
        for inner in ast.walk(node):
            self.check(inner, held)
        self.generic_visit(node)

    visit_AsyncFunctionDef = visit_FunctionDef

    def reach(self, node: ast.AST, held: dict[str, Reach]) -> Reach | None:
        """The members ``node`` reads after a session (None: it does not start at one). A call on
        the way (``session.tools.get(...)``) ends the reach: what a method returns is its own."""
        members: list[str] = []
        while isinstance(node, (ast.Attribute, ast.Subscript)):
            if isinstance(node, ast.Attribute):
                if node.attr == "session":
                    return Reach(tuple(reversed(members)))
                members.append(node.attr)
            else:
                members.append("[]")
            node = node.value
        if isinstance(node, ast.Name):
            if node.id == "session" or node.id.endswith("_session"):
                return Reach(tuple(reversed(members)))
            if node.id in held:
                return Reach(held[node.id].members + tuple(reversed(members)))
        return None

    def check(self, node: ast.AST, held: dict[str, Reach]) -> None:
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = [
                t for target in node.targets for t in (target.elts if isinstance(target, ast.Tuple) else [target])
            ]
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        for target in targets:  # `self.session = session` holds a session: only writes through one count
            if isinstance(target, (ast.Attribute, ast.Subscript)) and (reach := self.reach(target, held)) is not None:
                if reach.members:
                    self.note(node, "writes", reach)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in MUTATORS:
            if (reach := self.reach(node.func.value, held)) is not None and reach.members:
                self.note(node, f"calls .{node.func.attr}() on", reach)
        if called_name(node) == "setattr" and isinstance(node, ast.Call) and node.args:
            if (reach := self.reach(node.args[0], held)) is not None:
                self.note(node, "setattr on", reach)

    def note(self, node: ast.AST, what: str, reach: Reach) -> None:
        self.found.append(f"{where(self.path, node)} {what} session.{'.'.join(reach.members)}")


def part_writes(path: Path) -> list[str]:
    visitor = PartWrites(path)
    visitor.visit(ast.parse(path.read_text(encoding="utf-8")))
    return sorted(set(visitor.found))


def test_nothing_outside_the_session_writes_into_its_parts():
    offenders = [
        found
        for path in python_files()
        if path.relative_to(SOURCE).parts[0] != "session"
        for found in part_writes(path)
    ]
    assert not offenders, f"{len(offenders)} write(s) into a session's parts from outside session/:\n" + "\n".join(
        offenders
    )


def test_the_part_walk_sees_writes_through_aliases(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text(
        "def f(session, host, other: 'Session'):\n"
        "    approvals = session.approvals\n"
        "    approvals.policy = 'never'\n"
        "    approvals.session_approved.add('apply_patch')\n"
        "    host.session.hooks.table['Stop'] = ()\n"
        "    other.rollout.header = None\n"
        "    session.tools.get('task').define([])  # a method's own: not counted\n"
        "    seen = session.history.items  # a read: not counted\n"
    )
    found = [line.split(" ", 1)[1] for line in part_writes(sample)]
    assert found == [
        "writes session.approvals.policy",
        "calls .add() on session.approvals.session_approved",
        "writes session.hooks.table.[]",
        "writes session.rollout.header",
    ]
