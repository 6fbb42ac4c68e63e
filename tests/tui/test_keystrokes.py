"""Keystrokes reach the widget the user is looking at, with the timings that once misrouted them (issue 28)."""

from __future__ import annotations

from textual import events

from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


def burst(app, keys: list[str]) -> None:
    """Queue keys the way the terminal driver does for one read: all at once, before any is handled."""
    for key in keys:
        character = " " if key == "space" else key if len(key) == 1 else None
        app.post_message(events.Key(key, character))


async def test_enter_acts_on_the_text_typed_in_a_burst_not_on_a_stale_menu(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/")
        await pilot.pause(0.4)
        assert app.menu.is_open
        burst(app, [*"status", "enter"])
        await wait_until(pilot, lambda: "approval" in screen_text(app) or server.requests, what="its output")
        assert not server.requests  # /status asks no model; /review would have
        assert app.session.model == "test-model"


async def test_a_model_switch_typed_in_a_burst_switches_to_the_typed_name(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/")
        await pilot.pause(0.4)
        burst(app, [*"model", "space", *"fake-model", "enter"])  # a model the provider lists
        await wait_until(pilot, lambda: app.session.model == "fake-model" or server.requests, what="the switch")
        await wait_idle(pilot)
        assert app.session.model == "fake-model" and not server.requests
        assert "fake-model ·" in screen_text(app)  # the status bar


async def test_an_unknown_model_name_is_asked_about_before_switching(make_app, server):
    from agent_cli.tui.screens.approval import ApprovalScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/model /review")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        assert "Switch to /review?" in screen_text(app) and "does not list a model named '/review'" in screen_text(app)
        await pilot.press("n")
        await wait_idle(pilot)
        assert app.session.model == "test-model" and "kept test-model" in screen_text(app)


async def test_ctrl_c_that_clears_a_new_draft_never_quits(make_app, server):
    """Issue 28, bug 5: Ctrl+C on an empty composer, then a new draft, then Ctrl+C clears it and the app stays."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+c")
        await type_text(pilot, "new draft")
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
        assert app.is_running and app.return_code is None and app.composer.text == ""
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
        assert app.is_running  # one press on the empty composer warns
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
    assert app.return_code == 0


async def test_ctrl_d_on_an_empty_composer_quits_on_the_second_press(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "ab")
        await pilot.press("home", "ctrl+d")
        assert app.composer.text == "b" and app.is_running  # with text it deletes
        await pilot.press("ctrl+c", "ctrl+d")
        await pilot.pause(0.1)
        assert app.is_running and "press ctrl+d again to quit" in screen_text(app)
        await pilot.press("ctrl+d")
        await pilot.pause(0.1)
    assert app.return_code == 0


async def test_letters_typed_while_a_tool_cell_has_focus_go_to_the_composer(make_app, server):
    """Issue 28, bug 4: Tab moves focus to a cell; typing must not be lost."""
    from agent_cli.tui.widgets.tool_cell import ToolCell
    from tests.fake_server import ToolCall

    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo hi"})]), Reply(text="done"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_idle(pilot)
        await pilot.press("tab")
        assert isinstance(app.focused, ToolCell)
        burst(app, [*"next", "space", *"question"])  # typed at speed: keys arrive before focus moves
        await wait_until(pilot, lambda: app.composer.text == "next question", what="the typed text")
        assert app.focused is app.composer


async def test_shift_tab_cycles_the_mode(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "draft")
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: app.session.mode == "ask", what="ask mode")
        await wait_idle(pilot)
        await pilot.press("shift+tab")
        await wait_until(pilot, lambda: app.session.mode == "plan", what="plan mode")
        await wait_idle(pilot)
        assert "· plan" in str(app.status.build_content()) and app.composer.text == "draft"
        assert not server.requests
