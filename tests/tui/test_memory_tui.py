"""The TUI's memory shortcuts: `# text` saves a project memory; `/memory edit ID` opens $EDITOR."""

from __future__ import annotations

import sys

from agent_cli.tui.widgets.notice_cell import NoticeCell
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until


async def type_and_read_notice(pilot, app, text: str) -> NoticeCell:
    """Type ``text``, press Enter, and return the one notice the transcript then shows."""
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_until(pilot, lambda: len(app.transcript.query(NoticeCell)) == 1, what="the notice")
    await wait_idle(pilot)
    return app.transcript.query(NoticeCell).last()


async def test_hash_saves_a_project_memory_and_confirms_it(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        notice = await type_and_read_notice(pilot, app, "# run the tests with make check")
        assert notice.text == "Saved p1 (project): run the tests with make check"
        assert [m.text for m in app.session.memory.newest(["project"])["project"]] == ["run the tests with make check"]
    assert not server.requests  # nothing went to the model


async def test_pasted_markdown_that_opens_with_a_heading_is_a_prompt_not_a_memory(make_app, server):
    server.script(Reply(text="read it"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("# Release plan\n\n- ship the parser\n- update the docs")
        await wait_idle(pilot)
        assert app.session.memory.newest(["project"])["project"] == []
    sent = [m["content"] for m in server.requests[0].body["messages"] if m["role"] == "user"]
    assert "# Release plan\n\n- ship the parser\n- update the docs" in sent


async def test_memory_edit_opens_the_editor_and_saves_its_text(make_app, server, tmp_path, monkeypatch):
    editor = tmp_path / "editor.py"
    editor.write_text("import sys\nopen(sys.argv[1], 'w').write('run the tests with make test-all\\n')\n")
    monkeypatch.setenv("VISUAL", f"{sys.executable} {editor}")
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("# run the tests with make check")
        await wait_idle(pilot)
        app.send("/memory edit p1")
        await wait_until(pilot, lambda: len(app.transcript.query(NoticeCell)) == 2, what="the edit")
        await wait_idle(pilot)
        assert app.transcript.query(NoticeCell).last().text == "Edited p1: run the tests with make test-all"
        assert app.session.memory.get("p1").text == "run the tests with make test-all"
        app.send("#")
        await wait_idle(pilot)
        assert "empty" in app.transcript.query(NoticeCell).last().text
    assert not server.requests


async def test_with_memory_off_hash_says_so_and_sends_nothing(make_app, server):
    app = make_app("memory=false")
    async with app.run_test(size=SIZE) as pilot:
        notice = await type_and_read_notice(pilot, app, "# run the tests with make check")
        assert "memory is off" in notice.text and "memory = true" in notice.text and "not sent" in notice.text
        assert app.session.memory is None
    assert not server.requests  # not sent to the model either
