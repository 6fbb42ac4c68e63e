"""What a Codex or Claude Code user expects of the keys: scrolling from the composer, ? for help,
the way back into a session printed on exit (issue 28)."""

from __future__ import annotations

from agent_cli.tui.exit_notes import resume_note
from agent_cli.tui.widgets.user_message import UserMessage
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


async def test_page_keys_scroll_the_transcript_while_the_composer_keeps_focus(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        for index in range(60):
            await app.transcript.add(UserMessage(f"message number {index}"))
        await pilot.pause(0.2)
        bottom = app.transcript.scroll_y
        assert bottom > 0
        await pilot.press("pageup")
        await pilot.pause(0.1)
        assert app.transcript.scroll_y < bottom and app.focused is app.composer
        await pilot.press("ctrl+home")
        await pilot.pause(0.1)
        assert app.transcript.scroll_y == 0 and "message number 0" in screen_text(app)
        await pilot.press("pagedown")
        await pilot.pause(0.1)
        assert app.transcript.scroll_y > 0
        await pilot.press("ctrl+end")
        await pilot.pause(0.1)
        assert app.transcript.scroll_y == app.transcript.max_scroll_y


async def test_question_mark_in_an_empty_composer_shows_the_keys(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("?")
        await wait_until(pilot, lambda: "pageup, pagedown" in screen_text(app), what="the keys")
        assert app.composer.text == "" and "pageup, pagedown" in screen_text(app)
        await type_text(pilot, "why?")
        assert app.composer.text == "why?"  # inside a message it is just a character


async def test_the_exit_note_names_the_session_and_how_to_resume_it(make_app, server):
    server.script(Reply(text="hello"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        assert resume_note(app.session) is None  # nothing saved yet, nothing to resume
        app.send("hi")
        await wait_idle(pilot)
    note = resume_note(app.session)
    session_id = app.session.rollout.header.id
    assert note is not None and f"agent resume {session_id}" in note and f"agent exec resume {session_id}" in note


async def test_copy_puts_the_last_answer_on_the_clipboard(make_app, server):
    server.script(Reply(text="first answer"), Reply(text="the **last** answer"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/copy")
        await wait_idle(pilot)
        assert "no answer to copy yet" in screen_text(app)
        for prompt in ("one", "two"):
            app.send(prompt)
            await wait_idle(pilot)
        app.send("/copy")
        await wait_until(pilot, lambda: "copied the last answer" in screen_text(app), what="the copy")
        assert app.clipboard == "the **last** answer"


async def test_model_alone_opens_a_picker_of_the_providers_models(make_app, server):
    from agent_cli.tui.screens.model_picker import ModelPickerScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/model")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPickerScreen), what="the picker")
        picker = app.screen
        assert picker.models == ["test-model", "fake-model"]  # real models only: no `claude-`, `claude-2`
        assert picker.sources["fake-model"] == "listed by the provider"
        await type_text(pilot, "fake")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.session.model == "fake-model", what="the switch")
        await wait_idle(pilot)
        assert "test-model → fake-model" in screen_text(app)


async def test_a_typed_model_name_the_provider_does_not_list_is_checked_before_switching(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/model claude-2")  # in the model table, but this provider does not serve it
        await wait_until(pilot, lambda: "switch anyway?" in screen_text(app), what="the question")
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        assert "does not list a model named 'claude-2'" in screen_text(app)
        await pilot.press("n")
        await wait_idle(pilot)
        assert app.session.model == "test-model"


async def test_a_queued_message_can_be_edited_with_up_and_sent_now_with_ctrl_s(make_app, server):
    from tests.fake_server import Reply as R

    server.script(R(text="slow " * 400, chunk_size=4, delay=0.05), R(text="answer to the edit"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("first")
        await wait_until(pilot, lambda: app.busy and server.requests, what="the first turn")
        await type_text(pilot, "second")
        await pilot.press("enter")
        assert app.queue == ["second"] and "ctrl+s send now" in screen_text(app)
        await pilot.press("up")
        assert app.composer.text == "second" and not app.queue
        await type_text(pilot, " edited")
        await pilot.press("enter", "ctrl+s")
        await wait_until(pilot, lambda: len(server.requests) == 2, timeout=20, what="the queued message sent now")
        await wait_idle(pilot)
    assert "second edited" in str(server.requests[1].body["messages"][-1])


async def test_dollar_completes_skills_with_their_descriptions(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "use $com")
        assert app.menu.is_open and app.menu.kind == "skill"
        assert app.menu.items[0].label == "$commit" and app.menu.items[0].description
        await pilot.press("tab")
        assert app.composer.text == "use $commit " and not app.menu.is_open
        assert not app.busy


async def test_ctrl_c_copies_a_selection_in_the_composer_instead_of_clearing_it(make_app, server):
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "keep this draft")
        await pilot.press("shift+home")  # select the line
        await pilot.press("ctrl+c")
        assert app.clipboard == "keep this draft" and app.composer.text == "keep this draft" and app.is_running
        assert "copied 15 characters" in screen_text(app)


async def test_init_shows_the_new_agents_md_before_asking(make_app, server, repo):
    from agent_cli.tui.screens.approval import ApprovalScreen

    (repo / "AGENTS.md").write_text("hand-written\n")
    server.script(Reply(text="# Better\n\n- run pytest before committing\n"))
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.send("/init")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        assert "run pytest before committing" in screen_text(app) and "Replace" in screen_text(app)
        await pilot.press("n")
        await wait_idle(pilot)
    assert (repo / "AGENTS.md").read_text() == "hand-written\n"


def test_inline_is_an_option_of_the_tui():
    from agent_cli.arguments import build_tui_parser

    assert build_tui_parser().parse_args(["--inline"]).inline
    assert not build_tui_parser().parse_args([]).inline


async def test_a_name_typed_in_the_picker_that_matches_nothing_is_checked_as_model_name_is(make_app, server):
    """Issue 51, item 9: Enter on a typed name no list holds did nothing and said nothing; now it
    does what `/model NAME` does: checks it and asks before switching."""
    from agent_cli.tui.screens.model_picker import ModelPickerScreen

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "/model")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ModelPickerScreen), what="the picker")
        await type_text(pilot, "my-own-model")
        await wait_until(pilot, lambda: "enter switches to my-own-model" in screen_text(app), what="the hint")
        await pilot.press("enter")
        await wait_until(pilot, lambda: "switch anyway?" in screen_text(app), what="the question")
        assert "does not list a model named 'my-own-model'" in screen_text(app)
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        await pilot.press("y")
        await wait_idle(pilot)
        assert app.session.model == "my-own-model"
