"""The approval modal under `approval_policy=untrusted`: approve once, for the session, deny."""

from __future__ import annotations

from agent_cli.tui.screens import approval as approval_screen
from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.widgets.tool_cell import ToolCell
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

UNTRUSTED = 'approval_policy="untrusted"'


def tool_result(request) -> str:
    return next(m["content"] for m in request.body["messages"] if m["role"] == "tool")


async def ask(app, pilot) -> ApprovalScreen:
    await type_text(pilot, "make a file")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
    await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
    return app.screen


async def test_approve_once_runs_the_command(make_app, server, repo):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch made.txt"})]), Reply(text="made it"))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        modal = await ask(app, pilot)
        assert modal.request.summary == "touch made.txt"
        assert "touch made.txt" in screen_text(app) and "Yes, once" in screen_text(app)
        assert "waiting for approval" in app.activity.label
        await pilot.press("y")
        await wait_idle(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert app.transcript.query_one(ToolCell).result.success
    assert (repo / "made.txt").exists()
    assert "Exit code: 0" in tool_result(server.requests[1])


async def test_deny_with_a_reason_tells_the_model_and_runs_nothing(make_app, server, repo):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch nope.txt"})]), Reply(text="ok, not doing it"))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot)
        await pilot.press("n")
        await type_text(pilot, "use a temp dir")
        await pilot.press("enter")
        await wait_idle(pilot)
        cell = app.transcript.query_one(ToolCell)
        assert not cell.result.success and "✗ shell" in screen_text(app)
    assert not (repo / "nope.txt").exists()
    result = tool_result(server.requests[1])
    assert "denied" in result and "use a temp dir" in result


async def test_escape_in_the_modal_denies_without_a_reason(make_app, server, repo):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch esc.txt"})]), Reply(text="fine"))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot)
        await pilot.press("escape")
        await wait_idle(pilot)
    assert not (repo / "esc.txt").exists()
    assert "denied" in tool_result(server.requests[1])


async def test_approve_for_the_session_stops_asking_for_the_same_command(make_app, server, repo):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch one.txt"})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch two.txt"})]),
        Reply(text="both made"),
    )
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot)
        await pilot.press("a")
        await wait_idle(pilot)
        assert len(app.transcript.query(ToolCell)) == 2
    assert (repo / "one.txt").exists() and (repo / "two.txt").exists()
    server.assert_done()


async def test_interrupting_while_the_modal_is_open_closes_it(make_app, server, repo):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch never.txt"})]))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot)
        app.interrupt()
        await wait_idle(pilot)
        assert not isinstance(app.screen, ApprovalScreen)
        assert "interrupted" in screen_text(app)
    assert not (repo / "never.txt").exists()


async def test_typing_ahead_never_answers_the_modal(make_app, server, repo, monkeypatch):
    """Issue 28, bug 1: the user keeps typing while the modal opens; "a" must not approve for the session."""
    # A longer delay than a person gets, so that a loaded machine's pauses between the test's keys
    # never look like the user stopping to read; the keys still arrive while the modal is unarmed.
    monkeypatch.setattr(approval_screen, "ARM_SECONDS", 3.0)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch typed.txt"})]), Reply(text="fine"))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "make a file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), timeout=10, what="the modal")
        modal = app.screen
        await type_text(pilot, "and then")  # still typing, the modal just opened
        await pilot.press("enter")  # even Enter (the focused button's key once armed) answers nothing
        assert app.screen is modal and not modal.request.future.done()
        assert app.composer.text == "and then"  # the letters went to the draft
        assert not app.session.approvals.session_approved
        await wait_until(pilot, lambda: modal.armed, what="the modal to take keys")
        await pilot.press("escape")
        await wait_idle(pilot)
    assert not (repo / "typed.txt").exists()
    assert "denied" in tool_result(server.requests[1])


async def test_session_button_says_what_it_covers_and_its_key_is_underlined(make_app, server, repo):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch scoped.txt"})]), Reply(text="ok"))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot)
        text = screen_text(app)
        assert "don't ask again for commands starting with `touch` this session" in text
        await pilot.press("a")
        await wait_idle(pilot)
    assert (repo / "scoped.txt").exists()


async def test_the_waiting_label_ends_with_the_answer_and_the_wait_is_not_the_duration(make_app, server, repo):
    """Issue 28, bug 6."""
    import asyncio

    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch slow.txt && sleep 1"})]), Reply(text="done"))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot)
        await asyncio.sleep(2.0)  # the user reads the command for a while
        await pilot.press("y")
        await wait_until(pilot, lambda: (repo / "slow.txt").exists(), what="the command to start")
        assert "approval" not in app.activity.label and "approval" not in screen_text(app)
        await wait_idle(pilot)
        cell = app.transcript.query_one(ToolCell)
        assert 1.0 <= cell.result.duration < 2.0


async def test_at_60_columns_every_option_of_the_dialog_reads_whole(make_app, server, repo):
    """Issue 51, item 6: at 60 columns the options were cut ("…for commands startin"); they wrap."""
    from textual.widgets import Button

    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch made-at-sixty.txt"})]), Reply(text="ok"))
    app = make_app(UNTRUSTED)
    async with app.run_test(size=(60, 30)) as pilot:
        modal = await ask(app, pilot)
        await pilot.pause()
        lines = screen_text(app).splitlines()
        for button in modal.query("#buttons Button").results(Button):
            region = button.region
            assert region.width <= 60 and region.right <= 60, button.id
            shown = " ".join(line[region.x : region.right].strip() for line in lines[region.y : region.bottom])
            assert " ".join(shown.split()) == " ".join(button.label.plain.split()), button.id
        assert "commands starting with `touch` this session" in " ".join(" ".join(lines).replace("█", " ").split())
        await pilot.press("n", "enter")
        await wait_idle(pilot)
