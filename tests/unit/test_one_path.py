"""One path, not two (issue 47, item 6): every front end (the TUI, `agent exec`, `agent acp`, the
Claude SDK's stream-json front end, the app server, the TUI on a host) drives a session through
the same typed operations, sent to ``commands.conversation.Conversation`` in this process or, for
a session in a host, over the app-server protocol to the same ``Conversation`` there. Read on the
source, as tests/tui/test_operations_boundary.py reads it: no front end calls the session's own
ways of running work (a turn, a task, a steer, an interrupt, a mode or model switch, a rewind)."""

from __future__ import annotations

import ast

from tests.conftest import REPO

SOURCE = REPO / "agent_cli"
FRONT_ENDS = ("tui", "headless", "acp", "stream_json", "app_server", "remote")
# What Conversation applies for them (session.py): run the operation's work, or change what the
# next request carries.
DRIVING = {"run_in_task", "turn", "run_turn", "steer", "interrupt", "switch_mode", "switch_model", "rewind"}


def session_calls() -> list[str]:
    found = []
    paths = [path for front_end in FRONT_ENDS for path in sorted((SOURCE / front_end).rglob("*.py"))]
    for path in [*paths, SOURCE / "cli.py"]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in DRIVING
                and isinstance(node.func.value, (ast.Name, ast.Attribute))  # not Conversation(session).interrupt()
                and "session" in ast.unparse(node.func.value).lower()
            ):
                found.append(f"{path.relative_to(REPO)}:{node.lineno} {ast.unparse(node.func)}()")
    return found


def test_no_front_end_drives_a_session_but_through_its_operations():
    assert session_calls() == []


def test_the_check_sees_a_front_end_that_would():
    """The reader itself: a call of the kind it looks for is found (a test that cannot fail is a defect)."""
    call = ast.parse("self.session.interrupt()").body[0].value  # type: ignore[attr-defined]
    assert isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)
    assert call.func.attr in DRIVING and "session" in ast.unparse(call.func.value)
