"""`!command` runs in the session's shell and the model sees a user shell record (issue 28)."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply
from tests.session_helpers import make_session
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


async def test_bang_runs_a_command_and_the_next_request_carries_its_record(make_app, server, repo):
    server.script(Reply(text="I see the file list"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "!ls src")
        assert app.composer.has_class("-shell")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert not server.requests  # running a command asks no model
        cell = app.transcript.query_one(ToolCell)
        assert cell.result.success and "main.py" in str(cell.render())
        await type_text(pilot, "what is there?")
        await pilot.press("enter")
        await wait_idle(pilot)
    texts = [str(m.get("content")) for m in server.requests[0].body["messages"] if m["role"] == "user"]
    record = next(t for t in texts if "<user_shell_command>" in t)
    assert "<command>ls src</command>" in record and "main.py" in record and "helpers.py" in record
    assert texts[-1].endswith("what is there?") or "what is there?" in texts[-1]


async def test_bang_asks_like_the_models_commands_under_untrusted(make_app, server, repo):
    app = make_app('approval_policy="untrusted"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "!touch bang.txt")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
        await pilot.press("escape")
        await wait_idle(pilot)
        assert "!touch bang.txt was not run" in screen_text(app)
    assert not (repo / "bang.txt").exists()
    assert not app.session.history.items or all("<user_shell_command>" not in str(i) for i in app.session.history.items)


async def test_exec_runs_a_bang_command_the_same_way(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    events = [event async for event in submit(session, "!echo from-exec")]
    end = next(e for e in events if isinstance(e, ev.ToolCallEnd))
    assert end.success and "from-exec" in end.output
    assert any("<command>echo from-exec</command>" in str(item) for item in session.history.items)
    assert not server.requests
    await session.aclose()


async def test_a_resumed_shell_record_shows_as_a_cell(make_app, make_config, server, repo):
    from agent_cli.tui.app import AgentApp

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("!echo resumed-shell")
        await wait_idle(pilot)
    config = make_config()
    second = AgentApp(config, session=restore(open_session(config, interactive=True), app.session.rollout.path))
    async with second.run_test(size=SIZE) as pilot:
        await pilot.pause()
        cell = second.transcript.query_one(ToolCell)
        assert cell.arguments == {"command": "echo resumed-shell"} and "resumed-shell" in str(cell.render())
        assert "<user_shell_command>" not in screen_text(second)
