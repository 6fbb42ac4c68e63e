"""The approval modal's "Yes, and don't ask again": the rule shown can be edited, Enter saves it to
the file picked, and the next matching call is not asked about."""

from __future__ import annotations

from agent_cli.tui.screens.approval import ApprovalScreen
from tests.fake_server import Reply, ToolCall
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


async def test_dont_ask_again_saves_the_edited_rule_and_the_next_call_runs(make_app, server, repo):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch one.txt"})]),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch two.txt"})]),
        Reply(text="both made"),
    )
    app = make_app('approval_policy="untrusted"')
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "make files")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval modal")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")  # it ignores keys at first
        assert "don't ask again for `touch:*`" in screen_text(app)
        await pilot.press("d")
        await pilot.press("end", "backspace", "backspace", "backspace")  # "Bash(touch:*)" -> "Bash(touch"
        await type_text(pilot, " *)")  # the wildcard form instead
        await pilot.click("#save-claude")
        await wait_idle(pilot, timeout=20)
        assert not isinstance(app.screen, ApprovalScreen)
        assert "saved `Bash(touch *)`" in screen_text(app)
    assert (repo / "one.txt").exists() and (repo / "two.txt").exists()
    assert '"Bash(touch *)"' in (repo / ".claude" / "settings.local.json").read_text()
    assert len(server.requests) == 3
