"""The TUI's transcript never passes a control sequence to the terminal (issue 27, item 6)."""

from __future__ import annotations

from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle

HOSTILE = "\x1b]0;pwned\x07\x1b]52;c;aGk=\x07\x1b[2J"


def rendered_segments(app) -> str:
    return "".join(segment.text for strip in app.screen._compositor.render_strips() for segment in strip)


async def test_answers_tool_calls_and_outputs_show_without_escape_sequences(make_app, server, repo):
    (repo / "notes.txt").write_text(f"file {HOSTILE}says hi\n")
    server.script(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": "notes.txt"}),
                ToolCall("shell", {"command": "printf 'cmd \\033]52;c;aGk=\\007out\\n'"}),
            ]
        ),
        Reply(text=f"answer {HOSTILE}done"),
    )
    app = make_app('approval_policy="never"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "go")
        await pilot.press("enter")
        await wait_idle(pilot)
        shown = rendered_segments(app)
        assert "answer done" in screen_text(app)
        assert "\x1b" not in shown and "\x07" not in shown
