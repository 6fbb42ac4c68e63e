"""/rewind in the app: Esc Esc on an empty composer opens the picker; the chosen prompt comes back
into the composer, the files and the transcript go back with it; /undo asks first."""

from __future__ import annotations

from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.screens.rewind_picker import RewindPickerScreen
from agent_cli.tui.widgets.user_message import UserMessage
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, wait_idle, wait_until

SETTINGS = ('approval_policy="never"', 'sandbox_mode="danger-full-access"')
PROMPTS = ["first prompt", "second prompt", "third prompt"]


async def three_turns(app, pilot, server) -> None:
    for number, prompt in enumerate(PROMPTS, start=1):
        server.script(
            Reply(tool_calls=[ToolCall("shell", {"command": f"echo {number} > f{number}.txt"})]),
            Reply(text=f"answer {number}"),
        )
        app.send(prompt)
        await wait_idle(pilot)


async def test_escape_twice_rewinds_code_and_conversation_to_a_prompt(make_app, server, repo):
    app = make_app(*SETTINGS)
    async with app.run_test(size=SIZE) as pilot:
        await three_turns(app, pilot, server)
        await app.session.checkpoints._settle()
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindPickerScreen), what="the picker")
        shown = screen_text(app)
        assert "2. second prompt" in shown and "1 file(s) +1 -0" in shown
        await pilot.press("up", "enter")  # the last prompt is highlighted: up is the second
        await wait_until(pilot, lambda: "Code and conversation" in screen_text(app), what="the modes")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
        await wait_until(
            pilot, lambda: "f2.txt" in (shown := screen_text(app)) or "restore 2 file(s)" in shown, what="the files"
        )
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")  # it ignores keys at first
        await pilot.press("y")
        await wait_idle(pilot)
        await wait_until(pilot, lambda: app.composer.text == "second prompt", what="the prompt in the composer")
        assert sorted(p.name for p in repo.glob("f*.txt")) == ["f1.txt"]
        assert [m.text for m in app.transcript.query(UserMessage)] == ["first prompt"]
        server.script(Reply(text="fresh answer"))
        app.composer.load_text("")
        app.send("second prompt, edited")
        await wait_idle(pilot)
    request = server.requests[-1].body["messages"]
    prompts = [m["content"] for m in request if m["role"] == "user" and "prompt" in str(m["content"])]
    assert prompts[-2:] == ["first prompt", "second prompt, edited"]


async def test_escape_twice_does_nothing_while_typing_and_undo_can_be_refused(make_app, server, repo):
    app = make_app(*SETTINGS)
    async with app.run_test(size=SIZE) as pilot:
        server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo x > README.md"})]), Reply(text="done"))
        app.send("change the readme")
        await wait_idle(pilot)
        app.composer.load_text("half typed")
        await pilot.press("escape", "escape")
        await pilot.pause(0.2)
        assert not isinstance(app.screen, RewindPickerScreen)
        app.composer.load_text("")
        app.send("/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        await pilot.press("escape")  # no
        await wait_idle(pilot)
        assert (repo / "README.md").read_text() == "x\n"
        app.send("/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the question")
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        await pilot.press("y")
        await wait_idle(pilot)
        assert (repo / "README.md").read_text() == "# demo\n"


async def test_rewind_names_a_shell_prompt_as_typed_and_undo_numbers_its_diff(make_app, server, repo):
    """Issue 51, item 10: /rewind's confirm line named a `!command` prompt by its raw record
    (`<user_shell_command>...`), and /undo's diff was raw git text, without line numbers."""
    app = make_app(*SETTINGS)
    async with app.run_test(size=(120, 40)) as pilot:
        app.send("!echo hello > said.txt")
        await wait_idle(pilot)
        server.script(
            Reply(tool_calls=[ToolCall("shell", {"command": "printf 'one\\ntwo\\n' > notes.txt"})]), Reply(text="done")
        )
        app.send("write the notes")
        await wait_idle(pilot)
        assert (repo / "notes.txt").read_text() == "one\ntwo\n"
        await app.session.checkpoints._settle()
        await pilot.press("escape", "escape")
        await wait_until(pilot, lambda: isinstance(app.screen, RewindPickerScreen), what="the picker")
        await pilot.press("up", "enter")  # the first prompt: the shell command
        await wait_until(pilot, lambda: "Code and conversation" in screen_text(app), what="the modes")
        shown = screen_text(app)
        assert "Rewind to before: !echo hello > said.txt" in shown
        assert "user_shell_command" not in shown
        await pilot.press("escape")
        await wait_idle(pilot)
        app.send("/undo")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the undo question")
        await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
        await pilot.press("escape")  # no
        await wait_idle(pilot)
        lines = [line.strip() for line in screen_text(app).splitlines()]
        assert "1 +one" in lines and "2 +two" in lines, lines  # numbered, as the patch cell numbers
