"""The composer: newlines, input history across app instances, `@` files and `/` commands."""

from __future__ import annotations

import json

from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


async def test_ctrl_j_inserts_a_newline_and_enter_sends_both_lines(make_app, server):
    server.script(Reply(text="two lines seen"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "one\ntwo")
        assert app.composer.text == "one\ntwo" and not server.requests
        await pilot.press("enter")
        await wait_idle(pilot)
    content = server.requests[0].body["messages"][-1]["content"]
    assert "one\ntwo" in (content if isinstance(content, str) else json.dumps(content))


async def test_input_history_survives_a_restart(make_app, server, isolated_home):
    server.script(Reply(text="a"), Reply(text="b"))
    first = make_app()
    async with first.run_test(size=SIZE) as pilot:
        for text in ("remember me", "and me"):
            await type_text(pilot, text)
            await pilot.press("enter")
            await wait_idle(pilot)
    lines = (isolated_home / "history.jsonl").read_text().splitlines()
    assert [json.loads(line)["text"] for line in lines] == ["remember me", "and me"]

    second = make_app()
    async with second.run_test(size=SIZE) as pilot:
        await type_text(pilot, "draft")
        await pilot.press("up")
        assert second.composer.text == "and me"
        await pilot.press("up")
        assert second.composer.text == "remember me"
        await pilot.press("up")
        assert second.composer.text == "remember me"  # stays at the oldest
        await pilot.press("down", "down")
        assert second.composer.text == "draft"  # back to what was being typed


async def wait_for_files(app, pilot) -> None:
    await wait_until(pilot, lambda: bool(app.sources.files), what="the file list")


async def test_at_completes_git_files_fuzzily_and_skips_ignored_ones(make_app, server, repo):
    (repo / "untracked_note.md").write_text("new\n")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_files(app, pilot)
        assert "ignored.txt" not in app.sources.files and "untracked_note.md" in app.sources.files
        await type_text(pilot, "look at @hlp")
        assert app.menu.is_open and app.menu.kind == "file"
        assert app.menu.items[0].label == "src/helpers.py"
        assert "src/helpers.py" in screen_text(app)
        await pilot.press("tab")
        assert app.composer.text == "look at @src/helpers.py "
        assert not app.menu.is_open


async def test_at_completion_moves_with_arrows_and_escape_closes_it(make_app, server, repo):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await wait_for_files(app, pilot)
        await type_text(pilot, "@")
        assert app.menu.is_open and len(app.menu.items) >= 3
        second = app.menu.items[1].value
        await pilot.press("down", "enter")
        assert app.composer.text == second + " "
        await type_text(pilot, "@ma")
        await pilot.press("escape")
        assert not app.menu.is_open and app.composer.text.endswith("@ma")
        assert not app.busy


async def test_slash_shows_commands_with_descriptions(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/")
        names = [item.label for item in app.menu.items]
        assert {"/compact", "/new", "/status", "/help", "/quit"} <= set(names)
        await type_text(pilot, "st")
        assert [item.label for item in app.menu.items] == ["/status"]
        assert "AGENTS.md" in screen_text(app)  # the description is shown
        await pilot.press("enter")  # completes and runs
        await wait_until(pilot, lambda: "session" in screen_text(app), what="the status notice")
        assert "test-model" in screen_text(app) and "openai-chat" in screen_text(app)
    assert not server.requests
