"""Diffs carry line numbers, in the approval modal and in the transcript (issue 35, item 13)."""

from __future__ import annotations

from agent_cli.tui.screens.approval import ApprovalScreen
from agent_cli.tui.widgets.diff_view import render_diff
from tests.fake_server import Reply, ToolCall
from tests.tui.helpers import screen_text, wait_idle, wait_until

PATCH = (
    "*** Begin Patch\n*** Update File: src/main.py\n@@ def main():\n-    print('hi')\n"
    "+    print('hello, world')\n+    sys.stdout.flush()\n*** End Patch\n"
)


def test_numbers_follow_the_hunk_headers():
    diff = "--- a/x\n+++ b/x\n@@ -10,3 +10,4 @@\n ctx\n-old\n+new\n+more\n ctx2\n"
    assert render_diff(diff).plain.splitlines()[3:] == ["10  ctx", "11 -old", "11 +new", "12 +more", "13  ctx2"]


async def test_the_patch_approval_and_the_transcript_number_the_lines(make_app, server, repo):
    (repo / "src" / "main.py").write_text("import sys\n\n\ndef main():\n    print('hi')\n    return 0\n")
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": PATCH})]), Reply(text="done"))
    app = make_app('approval_policy="untrusted"')
    async with app.run_test(size=(120, 40)) as pilot:
        app.send("greet the world")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
        shown = screen_text(app)
        assert "5 -    print('hi')" in shown and "5 +    print('hello, world')" in shown
        assert "6 +    sys.stdout.flush()" in shown
        await pilot.press("y")
        await wait_idle(pilot)
        assert "6 +    sys.stdout.flush()" in screen_text(app)  # the tool cell's diff
