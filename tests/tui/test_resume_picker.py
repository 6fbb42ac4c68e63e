"""`/resume` in the app: the picker, resuming by id, cancelling, refusing under a turn, errors."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from agent_cli.commands.conversation import submit
from agent_cli.config import load_config
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.resume import restore
from agent_cli.store.catalog import list_sessions
from agent_cli.tui.screens.session_picker import SessionPickerScreen
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from agent_cli.tui.widgets.notice_cell import NoticeCell
from agent_cli.tui.widgets.user_message import UserMessage
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

CHAT = ['model_provider="openai-chat"', 'model="test-model"']


async def record_session(config, server, prompt: str, answer: str, age_seconds: float) -> Session:
    """A real turn against the fake server, saved on disk, its file dated ``age_seconds`` ago."""
    server.script(Reply(text=answer))
    session = open_session(config, interactive=True)
    async for _ in submit(session, prompt):
        pass
    await session.aclose()
    stamp = time.time() - age_seconds
    os.utime(session.rollout.path, (stamp, stamp))
    return session


def sent(request) -> str:
    return json.dumps(request.body["messages"])


def notices(app, kind: str) -> list[str]:
    return [cell.text for cell in app.transcript.query(NoticeCell) if cell.kind == kind]


async def test_picker_lists_sessions_here_first_and_enter_resumes_one(make_config, make_app, server, tmp_path):
    alpha = await record_session(make_config(), server, "alpha question", "alpha answer", 300)
    await record_session(make_config(), server, "beta question", "beta answer", 200)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    await record_session(load_config(elsewhere, CHAT), server, "gamma question", "gamma answer", 100)
    server.script(Reply(text="scratch answer"), Reply(text="carrying on"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("scratch")  # the app's own session has a file now; the picker leaves it out
        await wait_idle(pilot)
        old = app.session
        app.send("/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen), what="the picker")
        await wait_until(pilot, lambda: "beta question" in screen_text(app), what="the list")
        picker = app.screen
        assert [s.first_prompt for s in picker.shown] == ["beta question", "alpha question", "gamma question"]
        shown = screen_text(app)
        assert "beta question" in shown and "this directory" in shown and "elsewhere" in shown
        assert "3 min ago" in shown and "5 min ago" in shown  # each row says how old it is
        await pilot.press("down")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session is not old and not app.busy, what="the resume")
        await wait_until(pilot, lambda: bool(app.transcript.query(AssistantMessage)), what="the old conversation")
        assert [m.text for m in app.transcript.query(UserMessage)] == ["alpha question"]
        assert [m.text for m in app.transcript.query(AssistantMessage)] == ["alpha answer"]
        assert app.session.id == alpha.id
        assert any(alpha.id in text for text in notices(app, "info"))  # "Resumed session ... (N items)"
        await wait_until(pilot, lambda: not old.rollout.exists, what="the old session file to be closed")
        await type_text(pilot, "and then?")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.transcript.query(AssistantMessage).last().text == "carrying on"
    request = sent(server.requests[-1])
    assert "alpha question" in request and "alpha answer" in request and "and then?" in request
    assert "beta" not in request and "scratch" not in request
    # the resumed turn went on into the same file
    assert list_sessions(app.config.agent_home, limit=1)[0].path == alpha.rollout.path


async def test_resume_by_id_prefix(make_config, make_app, server):
    first = await record_session(make_config(), server, "first question", "first answer", 200)
    await record_session(make_config(), server, "second question", "second answer", 100)
    server.script(Reply(text="next answer"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        short = first.id.rsplit("-", 1)[-1]
        app.send(f"/resume {short[:6]}")
        await wait_idle(pilot)
        assert not isinstance(app.screen, SessionPickerScreen)
        assert app.session.id == first.id
        assert [m.text for m in app.transcript.query(UserMessage)] == ["first question"]
        assert "first answer" in screen_text(app)
        app.send(f"/resume {first.id}")
        await wait_idle(pilot)
        assert "is the session you are in" in notices(app, "error")[-1]
        app.send("more")
        await wait_idle(pilot)
    request = sent(server.requests[-1])
    assert "first answer" in request and "second" not in request


async def test_escape_cancels_the_picker(make_config, make_app, server):
    await record_session(make_config(), server, "kept question", "kept answer", 100)
    requests = len(server.requests)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        before = app.session
        app.send("/resume")
        await wait_until(pilot, lambda: isinstance(app.screen, SessionPickerScreen), what="the picker")
        await type_text(pilot, "kept")  # filtering keeps the match
        assert [s.first_prompt for s in app.screen.shown] == ["kept question"]
        await type_text(pilot, "zzz")
        assert app.screen.shown == [] and "no session matches" in screen_text(app)
        await pilot.press("escape")
        await wait_idle(pilot)
        assert not isinstance(app.screen, SessionPickerScreen)
        assert app.session is before and not app.transcript.query(UserMessage)
        assert app.focused is app.composer
    assert len(server.requests) == requests


async def test_resume_is_refused_while_a_turn_runs(make_config, make_app, server):
    saved = await record_session(make_config(), server, "saved question", "saved answer", 100)
    server.script(Reply(text="a slow answer in parts", chunk_size=6, delay=0.3))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("working")
        await wait_until(pilot, lambda: app.busy, what="the turn to start")
        before = app.session
        app.send(f"/resume {saved.id}")
        app.send("/resume")
        await wait_until(pilot, lambda: len(notices(app, "warning")) == 2, what="the refusals")
        assert "a turn is running" in notices(app, "warning")[0]
        assert app.queue == [] and not isinstance(app.screen, SessionPickerScreen)
        await wait_idle(pilot)
        assert app.session is before
        assert app.transcript.query(AssistantMessage).last().text == "a slow answer in parts"


async def test_errors_are_notices_and_the_session_stays(make_config, make_app, server, isolated_home):
    saved = await record_session(make_config(), server, "saved question", "saved answer", 100)
    lines = saved.rollout.path.read_text().splitlines()
    folder = saved.rollout.path.parent

    header = json.loads(lines[0]) | {"format_version": 99, "id": "20240101T000000-feed0001"}
    (folder / "000000-newer.jsonl").write_text("\n".join([json.dumps(header), *lines[1:]]) + "\n")
    header = json.loads(lines[0]) | {"id": "20240101T000000-feed0002"}
    (folder / "000000-corrupt.jsonl").write_text("\n".join([json.dumps(header), "{not json", *lines[1:]]) + "\n")
    holder = restore(open_session(make_config(), interactive=True), saved.rollout.path)  # another agent has it open
    app = make_app()
    try:
        async with app.run_test(size=SIZE) as pilot:
            before = app.session
            for ref, expected in [
                ("nosuch", "no saved session matches"),
                ("feed0001", "newer agent-cli"),
                ("feed0002", "corrupt"),
                (saved.id, "in use by another running agent"),
                ("feed", "matches 2 sessions"),
            ]:
                app.send(f"/resume {ref}")
                await wait_idle(pilot)
                assert expected in notices(app, "error")[-1], ref
            assert app.session is before and not app.transcript.query(UserMessage)
    finally:
        await holder.aclose()
    assert len(server.requests) == 1  # only the recorded session's turn


async def test_no_other_session_says_so(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/resume")
        await wait_idle(pilot)
        assert not isinstance(app.screen, SessionPickerScreen)
        assert "no other saved session" in notices(app, "info")[-1]


def test_picker_orders_this_directory_first_and_shows_age(tmp_path):
    from agent_cli.store.catalog import SessionSummary
    from agent_cli.tui.screens.session_picker import age, ordered

    def summary(cwd: str, prompt: str) -> SessionSummary:
        return SessionSummary(Path(prompt), "20240101T000000-abcd1234", cwd, "", "m", 1, 0.0, 10, prompt)

    sessions = [summary("/b", "1"), summary("/a", "2"), summary("/b", "3"), summary("/a", "4")]
    assert [s.first_prompt for s in ordered(sessions, Path("/a"))] == ["2", "4", "1", "3"]
    now = 1_700_000_000.0
    assert age(now - 5, now) == "just now"
    assert age(now - 600, now) == "10 min ago"
    assert age(now - 7300, now) == "2 h ago"
    assert age(now - 3 * 86400, now).startswith("2023-11-")


async def test_a_session_recorded_with_another_model_says_how_to_switch(make_config, make_app, server):
    saved = await record_session(make_config('model="other-model"'), server, "old question", "old answer", 100)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send(f"/resume {saved.id}")
        await wait_idle(pilot)
        assert app.session.id == saved.id and app.session.model == "test-model"
        note = notices(app, "info")[-1]
        assert "recorded with other-model" in note and "/model other-model" in note


async def test_resume_and_new_keep_the_model_chosen_with_slash_model(make_config, make_app, server):
    saved = await record_session(make_config(), server, "old question", "old answer", 100)
    listed = {"object": "list", "data": [{"id": "test-model"}, {"id": "gpt-4"}]}
    server.routes[("GET", "/v1/models")] = lambda rec: (200, listed)  # /model checks the provider's list
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/model gpt-4")
        await wait_idle(pilot)
        app.send(f"/resume {saved.id}")
        await wait_idle(pilot)
        session = app.session
        assert session.id == saved.id and session.model == "gpt-4"  # not the model the app started with
        assert session.window.tokens == 8_192 and session.tokens.encoding_name == "cl100k_base"
        note = notices(app, "info")[-1]
        assert "recorded with test-model" in note and "/model test-model to switch" in note
        app.send("/new")
        await wait_idle(pilot)
        assert app.session.model == "gpt-4" and app.session is not session
