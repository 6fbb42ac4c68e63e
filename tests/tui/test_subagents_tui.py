"""Subagents in the TUI: one cell per child with its current tool, expandable to its steps;
a child's approval modal names the agent."""

from __future__ import annotations

from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.widgets.subagent_cell import SubagentCell
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


def task(agent: str, description: str, prompt: str) -> ToolCall:
    return ToolCall("task", {"agent": agent, "description": description, "prompt": prompt})


async def test_a_child_gets_a_cell_that_shows_its_tool_then_its_answer(make_app, server, repo):
    (repo / "notes.txt").write_text("hello\n")
    server.script(
        Reply(tool_calls=[task("explore", "read the notes", "read notes.txt")]),
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})], delay=0.3),
        Reply(text="line one\nline two\nline three\nline four\nline five\nline six\nline seven\nline eight"),
        Reply(text="all read"),
    )
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "read them")
        await pilot.press("enter")
        running = "● explore  read the notes"
        await wait_until(pilot, lambda: running in screen_text(app), what="the running subagent cell")
        cell = app.transcript.query_one(SubagentCell)
        await wait_idle(pilot)
        text = screen_text(app)
        assert "✓ explore  read the notes" in text and "1 tool call" in text and "tokens" in text
        assert "line one" in text and "line eight" in text and "line five" not in text  # a preview
        cell.focus()
        await pilot.press("enter")
        await pilot.pause(0.05)
        text = screen_text(app)
        assert "✓ read_file notes.txt" in text and "line five" in text
    server.assert_done()


async def test_a_childs_approval_names_the_agent(make_app, server, repo):
    server.script(
        Reply(tool_calls=[task("general", "make a file", "touch made.txt")]),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch made.txt"})]),
        Reply(text="made"),
        Reply(text="done"),
    )
    app = make_app('approval_policy="untrusted"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
        assert "Allow the general subagent to run this shell command?" in screen_text(app)
        cell = app.transcript.query_one(SubagentCell)
        assert cell.current == "shell touch made.txt" and "shell touch made.txt" in str(cell.render())
        await pilot.press("y")
        await wait_idle(pilot)
    assert (repo / "made.txt").exists()
