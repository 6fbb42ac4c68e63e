"""The model's user-scope memory_save asks in the TUI (issue 27, item 5)."""

from __future__ import annotations

from agent_cli.tui.screens.approval import ApprovalScreen
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until

SAVE = ToolCall("memory_save", {"text": "The user likes short answers.", "scope": "user"})


def tool_result(request) -> str:
    return next(m["content"] for m in request.body["messages"] if m["role"] == "tool")


async def ask(app, pilot) -> ApprovalScreen:
    await type_text(pilot, "remember that")
    await pilot.press("enter")
    await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
    await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")  # it ignores keys at first
    return app.screen


async def test_a_user_scope_save_by_the_model_asks_and_yes_saves(make_app, server):
    server.script(Reply(tool_calls=[SAVE]), Reply(text="saved"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        modal = await ask(app, pilot)
        assert "every project" in (modal.request.reason or "")
        await pilot.press("y")
        await wait_idle(pilot)
        assert [m.text for m in app.session.memory.newest(["user"])["user"]] == ["The user likes short answers."]
    assert tool_result(server.requests[1]).startswith("Saved u1 (user)")


async def test_no_saves_nothing_and_tells_the_model(make_app, server):
    server.script(Reply(tool_calls=[SAVE]), Reply(text="fine"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ask(app, pilot)
        await pilot.press("escape")
        await wait_idle(pilot)
        assert app.session.memory.newest(["user"])["user"] == []
    assert "denied" in tool_result(server.requests[1])
