"""What a new user reads in the first hour (issue 35, items 15-18): /undo asks the user's
question, the /rewind picker and the compaction note read as typed, a short /compact is refused
with its reason, and the approval modal, the welcome banner, `?`, the trust buttons and the
resume note say what they mean."""

from __future__ import annotations

from agent_cli.store.replay import COMPACTED_NOTE
from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.screens.rewind_picker import RewindPickerScreen
from agent_cli.tui.screens.trust import TrustScreen
from tests.fake_server import Reply, ToolCall
from tests.integration.test_trust import marker_repo
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

SETTINGS = ('approval_policy="never"', 'sandbox_mode="danger-full-access"')
WIDE = (140, 40)


async def test_undo_asks_the_users_question(make_app, server, repo):
    app = make_app(*SETTINGS)
    async with app.run_test(size=WIDE) as pilot:
        server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo x > README.md"})]), Reply(text="done"))
        app.send("change the readme")
        await wait_idle(pilot)
        app.send("/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        shown = screen_text(app)
        assert "Restore this file to before 'change the readme'?" in shown
        assert "Allow the agent" not in shown and "tell the model why" not in shown and "every undo call" not in shown
        await pilot.press("y")
        await wait_idle(pilot)
    assert (repo / "README.md").read_text() == "# demo\n"


async def test_the_rewind_picker_shows_a_shell_turn_as_typed(make_app, server, repo):
    app = make_app(*SETTINGS)
    async with app.run_test(size=WIDE) as pilot:
        app.send("!echo hi")
        await wait_idle(pilot)
        server.script(Reply(text="fine"))
        app.send("a prompt")
        await wait_idle(pilot)
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindPickerScreen), what="the picker")
        shown = screen_text(app)
        assert "1. !echo hi" in shown and "2. a prompt" in shown
        assert "<user_shell_command>" not in shown and "<command>" not in shown


def test_the_compaction_note_does_not_say_compacted_twice():
    assert "compact" not in COMPACTED_NOTE  # shown under the title "compacted"


async def test_compact_on_a_short_conversation_is_refused_and_says_why(make_app, server):
    server.script(Reply(text="short answer"))
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        app.send("hello")
        await wait_idle(pilot)
        app.send("/compact")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: "not compacted" in screen_text(app), what="the refusal")
        assert "the conversation is short" in screen_text(app)
        assert "compacted" not in app.status.context_event
    assert len(server.requests) == 1  # no summary request


async def test_a_patch_approval_names_file_edits_not_a_tool(make_app, server, repo):
    patch = "*** Begin Patch\n*** Update File: README.md\n@@\n-# demo\n+# demo 2\n*** End Patch\n"
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]), Reply(text="done"))
    app = make_app('approval_policy="untrusted"')
    async with app.run_test(size=WIDE) as pilot:
        app.send("edit it")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
        shown = screen_text(app)
        assert "don't ask again for file edits (saved as a rule)" in shown
        assert "`Edit`" not in shown
        await pilot.press("y")
        await wait_idle(pilot)


async def test_the_welcome_banner_says_what_runs_without_asking_and_hints_init(make_app, server, repo):
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause()
        shown = screen_text(app)
        assert "sandboxed commands run without asking (writes here only, no network); others ask first" in shown
        assert "no AGENTS.md here: /init writes one" in shown
    (repo / "AGENTS.md").write_text("Be brief.\n")
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause()
        assert "/init" not in screen_text(app)


async def test_the_welcome_banner_says_when_commands_reach_allowed_domains_only(make_app, server, repo):
    app = make_app('sandbox.network.allowed_domains=["pypi.test"]')
    async with app.run_test(size=WIDE) as pilot:
        await pilot.pause()
        mode = app.session.approvals.network.mode  # allow-list, or off where this machine cannot proxy
        expected = "network to allowed domains only" if mode == "allow-list" else "no network"
        assert f"sandboxed commands run without asking (writes here only, {expected})" in screen_text(app)


async def test_question_mark_lists_esc_esc_bang_and_dollar(make_app, server):
    app = make_app()
    async with app.run_test(size=WIDE) as pilot:
        await type_text(pilot, "?")
        await wait_until(pilot, lambda: "esc esc" in screen_text(app), what="the keys")
        shown = screen_text(app)
        assert "/rewind to an earlier prompt" in shown
        assert "run a shell command yourself" in shown and "mention a skill" in shown


async def test_trust_buttons_show_their_keys(server, tmp_path, monkeypatch, isolated_home):
    from agent_cli.config import load_config
    from agent_cli.tui.app import AgentApp

    repo = marker_repo(tmp_path)
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    app = AgentApp(load_config(repo, ['model_provider="openai-chat"', 'model="test-model"']), None)
    async with app.run_test(size=WIDE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the trust question")
        shown = screen_text(app)
        assert "t Trust this folder" in shown and "n No, run none of it" in shown
        await pilot.press("n")
