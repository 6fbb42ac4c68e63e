"""Slash commands from the composer, the command palette, compaction and the status bar."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from agent_cli.tui.commands import parse_command
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.context_usage_view import ContextUsageView
from agent_cli.tui.widgets.notice_cell import NoticeCell
from agent_cli.tui.widgets.user_message import UserMessage
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


def test_parse_command_tells_commands_from_paths():
    assert parse_command("/compact keep the API notes") == ("compact", "keep the API notes")
    assert parse_command("  /new  ") == ("new", "")
    assert parse_command("/usr/bin/env is missing") is None
    assert parse_command("hello /new") is None
    assert parse_command("/") is None


async def test_help_lists_commands_and_keys(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/help")
        await wait_until(pilot, lambda: len(app.transcript.query(NoticeCell)) == 2, what="help")
        commands, keys = (cell.text for cell in app.transcript.query(NoticeCell))
        assert "/compact" in commands and "/quit" in commands and "/review" in commands
        assert "esc" in keys and "ctrl+j" in keys
    assert not server.requests


async def test_unknown_command_is_an_error_naming_the_commands(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/nope")
        await wait_idle(pilot)
        (notice,) = app.transcript.query(NoticeCell)
        assert notice.kind == "error" and "/nope" in notice.text and "/help" in notice.text
        app.send("/statu")
        await wait_idle(pilot)
        assert "/status" in app.transcript.query(NoticeCell).last().text  # the closest name is suggested
    assert not server.requests


async def test_new_starts_a_fresh_session(make_app, server):
    server.script(Reply(text="first session"), Reply(text="second session"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("hello")
        await wait_idle(pilot)
        old = app.session
        app.send("/new")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: not app.transcript.query(UserMessage), what="a clear transcript")
        assert app.session is not old and len(app.session.history) == 0
        app.send("hello again")
        await wait_idle(pilot)
    second = server.requests[1].body["messages"]
    assert not any("first session" in str(message.get("content")) for message in second)


async def test_quit_exits_with_zero(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/quit")
        await pilot.pause(0.1)
    assert app.return_code == 0


async def test_ctrl_c_twice_quits_and_once_clears_the_composer(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "draft")
        await pilot.press("ctrl+c")
        assert app.composer.text == "" and app.is_running
        await pilot.press("ctrl+c")  # the first press on an empty composer only warns, in the status bar
        assert app.is_running and "press ctrl+c again to quit" in screen_text(app)
        await pilot.press("ctrl+c")
        await pilot.pause(0.1)
    assert app.return_code == 0


async def test_compact_runs_a_compaction_and_the_status_bar_reports_it(make_app, server):
    server.script(Reply(text="a long answer " * 200), Reply(text="SUMMARY: the user asked for a long answer."))
    app = make_app("model_context_window=100000")
    async with app.run_test(size=(140, 36)) as pilot:
        app.send("talk")
        await wait_idle(pilot)
        app.send("/compact")
        await wait_idle(pilot)
        assert "compacted" in app.status.context_event
        assert "compacted" in screen_text(app)
        assert any(n.kind == "context" for n in app.transcript.query(NoticeCell))
    assert len(server.requests) == 2


async def test_context_shows_a_bar_by_part(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/context")
        await wait_until(pilot, lambda: bool(app.transcript.query(ContextUsageView)), what="the context view")
        view = app.transcript.query_one(ContextUsageView)
        assert view.usage.parts and view.usage.used == sum(part.tokens for part in view.usage.parts)
        shown = screen_text(app)
        assert "█" in shown and "system prompt" in shown and "free" in shown


async def test_a_reporting_command_runs_beside_a_turn_instead_of_queueing(make_app, server):
    server.script(Reply(text="a slow answer in five parts", chunk_size=6, delay=0.4))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("first")
        await wait_until(pilot, lambda: app.busy, what="the turn")
        app.send("/status")
        await wait_until(pilot, lambda: bool(app.transcript.query(NoticeCell)), what="the status notice")
        assert app.busy and app.queue == []
        assert "test-model" in app.transcript.query_one(NoticeCell).text
        app.send("/compact")  # changes the history: waits for the turn
        assert app.queue == ["/compact"]
        app.queue.clear()
        await wait_idle(pilot)


async def test_mode_switch_updates_the_status_bar(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/mode plan")
        await wait_idle(pilot)
        assert "· plan" in str(app.status.build_content())


async def test_status_bar_shows_the_last_compaction_from_events(make_app, server):
    app = make_app()
    async with app.run_test(size=(140, 30)) as pilot:
        await app.handle_event(ev.CompactionStarted("auto"))
        await app.handle_event(ev.CompactionFinished("manual", 182_000, 24_000, 300, 12))
        await pilot.pause()
        assert app.status.context_event == "compacted 182k → 24k"
        assert "compacted 182k → 24k" in screen_text(app)
        await app.handle_event(ev.CompactionFinished("auto", 50_000, 52_000, 30, 30, applied=False))
        assert app.status.context_event == "compaction kept history (50k)"


async def test_command_palette_offers_the_main_actions(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        titles = [command.title for command in app.get_system_commands(app.screen)]
        assert {"New session", "Compact", "Status", "Help", "Toggle tool output"} <= set(titles)
        assert any("theme" in title.lower() for title in titles)
        await pilot.press("ctrl+p")
        await type_text(pilot, "Status")
        await pilot.pause(0.3)
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(app.transcript.query(NoticeCell)), what="the status notice")
        assert "approval" in app.transcript.query_one(NoticeCell).text


async def test_plan_and_apply_patch_diff_render(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        plan = (
            ev.PlanStep("read the code", "completed"),
            ev.PlanStep("fix the bug", "in_progress"),
            ev.PlanStep("run tests", "pending"),
        )
        await app.handle_event(ev.PlanUpdated(plan, "small fix"))
        await app.handle_event(ev.ToolCallBegin("p1", "apply_patch", {"patch": "..."}))
        diff = "--- a/app.py\n+++ b/app.py\n@@ -1 +1 @@\n-old line\n+new line\n"
        change = ev.FileChange("app.py", "update", None, diff)
        end = ev.ToolCallEnd("p1", "apply_patch", {"patch": "..."}, "Success", True, 0.01, None, (change,))
        await app.handle_event(end)
        await pilot.pause()
        shown = screen_text(app)
        assert "☑ read the code" in shown and "◐ fix the bug" in shown and "☐ run tests" in shown
        assert "update app.py" in shown and "-old line" in shown and "+new line" in shown
        assert not app.transcript.query(AssistantMessage)


async def test_a_resumed_session_shows_its_conversation(make_app, make_config, server):
    from agent_cli.tui.app import AgentApp
    from tests.fake_server import ToolCall

    server.script(
        Reply(text="Listing.", tool_calls=[ToolCall("shell", {"command": "echo resumed-output"})]),
        Reply(text="**All** listed."),
        Reply(text="welcome back"),
    )
    first = make_app()
    async with first.run_test(size=SIZE) as pilot:
        first.send("list things")
        await wait_idle(pilot)
    path = first.session.rollout.path

    config = make_config()
    second = AgentApp(config, session=restore(open_session(config, interactive=True), path))
    async with second.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert [cell.text for cell in second.transcript.query(UserMessage)] == ["list things"]
        assert [m.text for m in second.transcript.query(AssistantMessage)] == ["Listing.", "**All** listed."]
        assert "resumed-output" in screen_text(second) and "resume" in screen_text(second)
        second.send("and now?")
        await wait_idle(pilot)
    assert "list things" in str(server.requests[2].body["messages"])


async def test_rewind_to_before_a_compaction_then_resume_loads_cleanly(make_app, server):
    """Issue 51, item 7: /compact, /rewind to a prompt it kept, then resume: the session file
    loads without a "malformed learned compaction line" warning about the agent's own file, and
    the status bar no longer says "compacted …" about a context that is gone."""
    from agent_cli.tui.resuming import restored_session

    server.script(
        Reply(text="a long answer " * 200),
        Reply(text="another long answer " * 200),
        Reply(text="SUMMARY: the user asked for long answers."),
    )
    app = make_app("model_context_window=100000")
    async with app.run_test(size=(140, 36)) as pilot:
        app.send("talk")
        await wait_idle(pilot)
        app.send("talk more")
        await wait_idle(pilot)
        app.send("/compact")
        await wait_idle(pilot)
        assert "compacted" in app.status.context_event
        app.send("/rewind 1 conversation")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: app.composer.text == "talk", what="the prompt back in the composer")
        assert "compacted" not in app.status.context_event and "compacted" not in screen_text(app).splitlines()[-1]
        path, config = app.session.rollout.path, app.config
    resumed = restored_session(config, path)
    try:
        assert resumed.resumed is not None
        assert not [w for w in resumed.resumed.warnings if "learned" in w], resumed.resumed.warnings
    finally:
        await resumed.aclose()


def test_the_context_bar_fills_as_much_as_its_percentage():
    """Issue 51, item 12: 3% used filled about 10% of the bar (a cell for every small part)."""
    from agent_cli.events import ContextPart, ContextUsage
    from agent_cli.tui.widgets.context_usage_view import BAR_WIDTH, render_usage

    names = ("system prompt", "tool schemas", "AGENTS.md", "skills", "environment", "conversation")
    usage = ContextUsage(
        tuple(ContextPart(name, 600) for name in names), used=3_600, window=120_000, counting_method="x"
    )
    bar = render_usage(usage).plain.splitlines()[1]
    assert "3% used" in render_usage(usage).plain
    assert bar.count("█") == round(BAR_WIDTH * 0.03) and len(bar) == BAR_WIDTH
    half = ContextUsage((ContextPart("conversation", 60_000),), used=60_000, window=120_000, counting_method="x")
    assert render_usage(half).plain.splitlines()[1].count("█") == BAR_WIDTH // 2
