"""The project's own lint/test commands after a turn that changed files, in a real session against
the fake model server: a failure goes back to the model, a pass ends the turn, the rounds are
limited, and an untrusted repository's commands do not run."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.context.fragments import PROJECT_CHECKS
from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

# passes once answer.txt says 42; prints a long log first, so only its tail reaches the model
CHECK = """import sys
print("log line\\n" * 500)
text = open("answer.txt").read().strip()
print("expected 42, got", text)
sys.exit(text != "42")
"""
TEST = 'test_command="python3 check.py"'


def project(tmp_path):
    repo = git_init(tmp_path / "repo")
    (repo / "check.py").write_text(CHECK)
    return repo


def write_answer(value: str, add: bool = False) -> ToolCall:
    if add:
        body = f"*** Add File: answer.txt\n+{value}"
    else:
        body = f"*** Update File: answer.txt\n@@\n-41\n+{value}"
    return ToolCall("apply_patch", {"patch": f"*** Begin Patch\n{body}\n*** End Patch"})


def user_texts(request) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user" and isinstance(m["content"], str)]


async def test_a_failing_test_command_makes_the_model_try_again_and_a_pass_ends_it(server, tmp_path, monkeypatch):
    repo = project(tmp_path)
    server.script(
        Reply(tool_calls=[write_answer("41", add=True)]),
        Reply(text="done"),  # the tests fail: the model hears of it
        Reply(tool_calls=[write_answer("42")]),
        Reply(text="fixed"),  # they pass: the turn ends here
    )
    session = make_session(server, repo, monkeypatch, TEST)
    try:
        events = await collect_events(session, "write the answer")
    finally:
        await session.aclose()
    server.assert_done()
    note = next(text for text in user_texts(server.requests[2]) if PROJECT_CHECKS.matches(text))
    assert "expected 42, got 41" in note and "exited with 1" in note and "round 1 of 3" in note
    assert note.count("log line") < 100  # the tail, not the whole output
    checks = [event for event in events if isinstance(event, ev.ProjectCheck)]
    assert [(check.kind, check.exit_code, check.sent_to_model) for check in checks] == [
        ("test", 1, True),
        ("test", 0, False),
    ]
    assert isinstance(events[-1], ev.TurnComplete) and events[-1].last_message == "fixed"


async def test_the_rounds_are_limited_and_a_turn_without_edits_runs_nothing(server, tmp_path, monkeypatch):
    repo = project(tmp_path)
    server.script(
        Reply(tool_calls=[write_answer("41", add=True)]),
        Reply(text="done"),
        Reply(tool_calls=[write_answer("40")]),
        Reply(text="still done"),  # the one round is used: the turn ends with a warning
        Reply(text="just talking"),  # the next turn changes nothing: no check runs
    )
    session = make_session(server, repo, monkeypatch, TEST, "check_rounds=1")
    try:
        events = await collect_events(session, "write the answer")
        later = await collect_events(session, "thanks")
    finally:
        await session.aclose()
    server.assert_done()
    assert any(isinstance(e, ev.Warning) and "still fails after 1 round" in e.message for e in events)
    assert not any(isinstance(e, ev.ProjectCheck) for e in later)


async def test_an_untrusted_repository_s_commands_and_servers_do_not_run(server, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "repo")
    (repo / ".agent").mkdir()
    marker = tmp_path / "ran"
    (repo / ".agent" / "config.toml").write_text(
        f'test_command = "touch {marker}"\n[lsp.evil]\ncommand = ["touch", "{marker}"]\nlanguages = ["python"]\n'
    )
    server.script(
        Reply(
            tool_calls=[
                ToolCall("apply_patch", {"patch": "*** Begin Patch\n*** Add File: a.py\n+x = 1\n*** End Patch"})
            ]
        ),
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch, trust=False)
    try:
        events = await collect_events(session, "add a file")
    finally:
        await session.aclose()
    assert not marker.exists()
    assert not any(isinstance(event, ev.ProjectCheck) for event in events)
    assert any("setting lsp" in item.line() or item.name == "lsp" for item in session.trust.inventory.items)


async def test_lint_and_test_by_hand_and_in_status(server, tmp_path, monkeypatch):
    repo = project(tmp_path)
    (repo / "answer.txt").write_text("42\n")
    session = make_session(server, repo, monkeypatch, TEST, 'lint_command="exit 3"')
    try:
        tested = await collect_events(session, "/test")
        linted = await collect_events(session, "/lint")
        status = await collect_events(session, "/status")
    finally:
        await session.aclose()
    assert [(e.kind, e.exit_code) for e in tested + linted if isinstance(e, ev.ProjectCheck)] == [
        ("test", 0),
        ("lint", 3),
    ]
    assert any(isinstance(e, ev.Notice) and "passed" in e.text for e in tested)
    text = next(e.text for e in status if isinstance(e, ev.Notice))
    assert (
        "test_command: python3 check.py (last run passed)" in text and "lint_command: exit 3 (last run failed)" in text
    )
    assert not server.requests  # by hand: nothing went to the model


async def test_without_a_command_lint_says_how_to_set_one(server, tmp_path, monkeypatch):
    session = make_session(server, git_init(tmp_path / "repo"), monkeypatch)
    try:
        events = await collect_events(session, "/lint")
    finally:
        await session.aclose()
    assert any("no lint_command is configured" in getattr(e, "message", "") for e in events), events


async def test_a_check_that_hangs_is_stopped_at_its_limit(server, tmp_path, monkeypatch):
    session = make_session(
        server, git_init(tmp_path / "repo"), monkeypatch, 'test_command="sleep 30.0202"', "check_timeout_ms=500"
    )
    try:
        events = await collect_events(session, "/test")
    finally:
        await session.aclose()
    [check] = [e for e in events if isinstance(e, ev.ProjectCheck)]
    assert check.exit_code is None and check.duration < 15
    assert any(isinstance(e, ev.Notice) and "timed out" in e.text for e in events)


async def test_init_suggests_the_checks_the_repository_has(server, tmp_path, monkeypatch):
    repo = git_init(tmp_path / "repo")
    (repo / "Makefile").write_text("lint:\n\truff check\ntest:\n\tpytest\n")
    server.script(Reply(text="# AGENTS.md\n\nRun make test."))
    session = make_session(server, repo, monkeypatch, 'lint_command="custom-lint"')
    try:
        events = await collect_events(session, "/init")
    finally:
        await session.aclose()
    [note] = [e.text for e in events if isinstance(e, ev.Notice) and "suggests checks" in e.text]
    assert 'test_command = "make test"' in note and "lint_command" not in note  # lint is configured already
    assert (repo / "AGENTS.md").read_text().startswith("# AGENTS.md")
