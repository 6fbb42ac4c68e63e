"""The turn holds values, not the session: nothing a turn's steps are given leads back to ``Session``.

A turn's steps (session/turn.py, tool_call.py, compaction.py, hooks.py...) get a ``TurnContext`` of
plain values and, beside it, the session's state and services. This test reads their types as
Python resolves them: a field or parameter typed as ``Session`` or as a protocol ``Session``
satisfies (a protocol "over the session") is a way back, and so is every attribute a step reads
through one. Both counts must be zero.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import inspect
import types
import typing
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.session.session import Session
from agent_cli.session.turn_context import TurnContext
from agent_cli.tools.base import ToolContext
from tests.conftest import REPO

SESSION_PACKAGE = REPO / "agent_cli" / "session"


def instance_attributes(cls: type) -> set[str]:
    """Names ``cls.__init__`` assigns on ``self`` (a class's own attributes are in ``dir``)."""
    tree = ast.parse(inspect.getsource(cls))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self"
    }


SESSION_MEMBERS = {name for name in dir(Session) if not name.startswith("__")} | instance_attributes(Session)


def protocol_members(cls: type) -> set[str]:
    members: set[str] = set()
    for base in cls.__mro__:
        if base is object or base is typing.Protocol or base is typing.Generic:
            continue
        members |= {name for name in vars(base) if not name.startswith("_")}
        members |= set(getattr(base, "__annotations__", {}))
    return members


def leads_to_the_session(cls: object) -> bool:
    """``Session`` itself, or a protocol whose every member ``Session`` has."""
    if cls is Session:
        return True
    if not isinstance(cls, type) or not getattr(cls, "_is_protocol", False):
        return False
    members = protocol_members(cls)
    return bool(members) and members <= SESSION_MEMBERS


def resolved_hints(obj: object) -> dict[str, object]:
    """``obj``'s annotations as types; one that cannot be resolved is left out."""
    try:
        return typing.get_type_hints(obj)
    except Exception:  # noqa: BLE001 - a name only imported for type checking: resolve one by one
        pass
    owners = [base for base in reversed(obj.__mro__) if base is not object] if isinstance(obj, type) else [obj]
    found: dict[str, object] = {}
    for owner in owners:
        namespace = vars(importlib.import_module(getattr(owner, "__module__", "builtins")))
        for name, annotation in getattr(owner, "__annotations__", {}).items():
            try:
                found[name] = eval(annotation, namespace) if isinstance(annotation, str) else annotation  # noqa: S307
            except Exception:  # noqa: BLE001
                continue
    return found


def classes_in(hint: object) -> Iterator[type]:
    """The classes a hint names: ``X``, ``X | None``, ``list[X]``..."""
    origin = typing.get_origin(hint)
    if origin is typing.Union or origin is types.UnionType:
        for arg in typing.get_args(hint):
            yield from classes_in(arg)
    elif origin is not None:
        if isinstance(origin, type) and origin.__module__.startswith("agent_cli"):
            yield origin
        for arg in typing.get_args(hint):
            if not isinstance(arg, (list, tuple)):
                yield from classes_in(arg)
    elif isinstance(hint, type):
        yield hint


def member_type(cls: type | None, name: str) -> type | None:
    """The type of ``cls().name``: a field, an annotated attribute or a property's return."""
    if cls is None:
        return None
    attribute = inspect.getattr_static(cls, name, None)
    if isinstance(attribute, property) and attribute.fget is not None:
        hint = resolved_hints(attribute.fget).get("return")
    else:
        hint = None
        for base in cls.__mro__:
            if name in getattr(base, "__annotations__", {}):
                hint = resolved_hints(base).get(name)
                break
    classes = [found for found in classes_in(hint) if found is not type(None)] if hint is not None else []
    return classes[0] if len(classes) == 1 else None


def ways_back_in_fields(roots: list[type]) -> list[str]:
    """Fields typed as the session or a protocol over it, in ``roots`` and every dataclass they hold."""
    seen: set[type] = set()
    found: list[str] = []
    stack = list(roots)
    while stack:
        cls = stack.pop()
        if cls in seen or not dataclasses.is_dataclass(cls):
            continue
        seen.add(cls)
        hints = resolved_hints(cls)
        for field in dataclasses.fields(cls):
            for named in classes_in(hints.get(field.name)):
                if leads_to_the_session(named):
                    found.append(f"{cls.__name__}.{field.name}: {named.__name__}")
                else:
                    stack.append(named)
    return found


def step_modules() -> list[str]:
    """The modules of session/ below ``Session``: what it hands a turn to (turn.py, tool_call.py,
    compaction.py, hooks.py, the meter...). Those that import it (resume.py, forking.py) work on a
    session from above, as front ends do."""
    below = []
    for path in sorted(SESSION_PACKAGE.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        imported = {node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)}
        if path.stem not in ("__init__", "session") and "agent_cli.session.session" not in imported:
            below.append(f"agent_cli.session.{path.stem}")
    return below


def test_the_steps_are_the_modules_below_the_session():
    steps = step_modules()
    assert {f"agent_cli.session.{name}" for name in ("turn", "tool_call", "compaction", "hooks", "window")} <= set(
        steps
    )
    assert "agent_cli.session.resume" not in steps


def functions_of(module_name: str) -> Iterator[tuple[str, ast.AST, object, type | None]]:
    """(qualified name, its ast, the function, its class) for each function and method of a module."""
    module = importlib.import_module(module_name)
    tree = ast.parse(Path(module.__file__ or "").read_text(encoding="utf-8"))
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and hasattr(module, node.name):
            yield node.name, node, getattr(module, node.name), None
        elif isinstance(node, ast.ClassDef) and hasattr(module, node.name):
            cls = getattr(module, node.name)
            for child in node.body:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    function = inspect.getattr_static(cls, child.name, None)
                    if isinstance(function, property):
                        function = function.fget
                    if isinstance(function, (staticmethod, classmethod)):
                        function = function.__func__
                    if callable(function):
                        yield f"{node.name}.{child.name}", child, function, cls


def calls_back(module_name: str) -> list[str]:
    """Parameters typed as the session (or a protocol over it), and each attribute a function
    reads through one, however deep: ``turn.state.tool_specs`` is one."""
    found: list[str] = []
    for name, node, function, cls in functions_of(module_name):
        env: dict[str, type | None] = {}
        for parameter, hint in resolved_hints(function).items():
            if parameter == "return":
                continue
            classes = [found_class for found_class in classes_in(hint) if found_class is not type(None)]
            env[parameter] = classes[0] if len(classes) == 1 else None
            if any(leads_to_the_session(named) for named in classes):
                found.append(f"{module_name}.{name}: parameter {parameter}")
        if cls is not None:
            env.setdefault("self", cls)

        def type_of(expr: ast.expr) -> type | None:
            if isinstance(expr, ast.Name):
                return env.get(expr.id)
            if isinstance(expr, ast.Attribute):
                return member_type(type_of(expr.value), expr.attr)
            return None

        for inner in ast.walk(node):
            if isinstance(inner, ast.Attribute) and leads_to_the_session(type_of(inner.value)):
                found.append(f"{module_name}.{name}:{inner.lineno}: {ast.unparse(inner)}")
    return found


def test_a_tool_gets_a_context_made_whole_that_nothing_patches(tmp_path):
    """Built once per call with the sandbox and environment the approval step chose (services.py)."""
    context = ToolContext(cwd=tmp_path, data_dir=tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        context.sandbox = None  # type: ignore[misc]


def test_the_turn_context_has_no_field_that_leads_back_to_the_session():
    assert ways_back_in_fields([TurnContext]) == []


def test_turn_steps_never_reach_back_into_the_session():
    found = [line for module in step_modules() for line in calls_back(module)]
    assert found == [], f"{len(found)} ways back into the session:\n" + "\n".join(found)


class _OverTheSession(typing.Protocol):
    def tool_specs(self) -> list[object]: ...

    def context_tokens(self) -> int: ...


@dataclasses.dataclass(frozen=True)
class _Holder:
    inner: _OverTheSession | None


@dataclasses.dataclass(frozen=True)
class _Context:
    number: int
    holder: _Holder
    session: Session


def _a_step(turn: _Context, extra: int) -> object:
    return turn.holder.inner.tool_specs() if turn.holder.inner else turn.session.id  # type: ignore[union-attr]


def test_the_checks_see_a_way_back_where_there_is_one():
    """The counters themselves: a context that holds the session, and a step that reads through it."""
    assert leads_to_the_session(_OverTheSession) and not leads_to_the_session(_Holder)
    assert sorted(ways_back_in_fields([_Context])) == ["_Context.session: Session", "_Holder.inner: _OverTheSession"]
    steps = [line.split(": ", 1)[1] for line in calls_back(__name__) if "._a_step:" in line]
    assert sorted(steps) == ["turn.holder.inner.tool_specs", "turn.session.id"]
