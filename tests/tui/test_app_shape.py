"""The app split by concern (issue 46, item 5): AgentApp keeps at most 35 methods, no file of the
TUI is over 500 lines, and events are made terminal-safe once on their way to the screen (as they
arrive in the app, or as they are replayed from a session file), not again by the renderer."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

TUI = REPO / "agent_cli" / "tui"


def methods_of(path: Path, class_name: str) -> list[str]:
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.ClassDef) and node.name == class_name:
            return [item.name for item in node.body if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))]
    raise AssertionError(f"no class {class_name} in {path}")


def test_agent_app_has_at_most_35_methods():
    methods = methods_of(TUI / "app.py", "AgentApp")
    assert len(methods) <= 35, methods


def test_no_file_of_the_tui_is_over_500_lines():
    long = {
        str(path.relative_to(REPO)): n for path in TUI.rglob("*.py") if (n := len(path.read_text().splitlines())) > 500
    }
    assert long == {}


def callers_of(name: str) -> set[tuple[str, str]]:
    """(file, function) of every call of ``name`` in the TUI."""
    found = set()
    for path in TUI.rglob("*.py"):
        for function in ast.walk(ast.parse(path.read_text())):
            if isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(function):
                    if (
                        isinstance(node, ast.Call)
                        and getattr(node.func, "id", getattr(node.func, "attr", None)) == name
                    ):
                        found.add((path.name, function.name))
    return found


def test_events_are_made_terminal_safe_once_on_the_way_to_the_screen():
    assert callers_of("terminal_safe_event") == {("app.py", "handle_event"), ("event_renderer.py", "replay")}
