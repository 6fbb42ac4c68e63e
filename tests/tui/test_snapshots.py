"""Snapshots of the main states. Update with `pytest tests/tui --snapshot-update` after a look."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.tui.screens.approval import ApprovalScreen
from tests.fake_server import Reply, ToolCall, Usage
from tests.tui.helpers import type_text, wait_idle, wait_until

SIZE = (100, 30)
WINDOW = "model_context_window=100000"


def frozen(app):
    """Stop the clock and the cursor blink so every run draws the same screen."""
    app.activity.clock = lambda: 0.0
    app.composer.cursor_blink = False
    return app


def test_idle(snap_compare, make_app):
    app = frozen(make_app(WINDOW))

    async def settle(pilot):
        await wait_until(pilot, lambda: app.status.count is not None, what="the initial token count")
        app.status.set_tokens(ev.TokenCount(Usage(), Usage(), 3_000, 95_000))  # the prompt files may change
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=settle)


def test_streamed_answer(snap_compare, make_app, server):
    server.script(
        Reply(
            text="## Result\n\nThe function **works**:\n\n- parses input\n- returns `42`\n\n"
            "```python\ndef answer():\n    return 42\n```\n",
            chunk_size=6,
            usage=Usage(input_tokens=12_000, cached_input_tokens=6_000, output_tokens=300),
        )
    )
    app = frozen(make_app(WINDOW))

    async def run(pilot):
        await type_text(pilot, "what does it return?")
        await pilot.press("enter")
        await wait_idle(pilot)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_approval_modal(snap_compare, make_app, server):
    command = ToolCall("shell", {"command": "mkdir -p build && touch build/out.txt"})
    server.script(Reply(text="I will create it.", tool_calls=[command]))
    app = frozen(make_app(WINDOW, 'approval_policy="untrusted"'))

    async def run(pilot):
        await type_text(pilot, "make the build dir")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_after_compaction(snap_compare, make_app):
    app = frozen(make_app(WINDOW))

    async def run(pilot):
        await app.renderer.user_message("summarize the repo")
        await app.handle_event(ev.AgentMessage("The repo has **three** modules."))
        await app.handle_event(ev.CompactionStarted("manual"))
        await app.handle_event(ev.CompactionFinished("manual", 182_000, 24_000, 310, 14))
        await app.handle_event(ev.TokenCount(Usage(), Usage(400_000, 300_000, 9_000), 24_000, 95_000))
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_approval_of_a_patch_shows_its_diff(snap_compare, make_app, server, repo):
    (repo / "src" / "main.py").write_text("import sys\n\n\ndef main():\n    print('hi')\n    return 0\n")
    patch = (
        "*** Begin Patch\n*** Update File: src/main.py\n@@ def main():\n-    print('hi')\n"
        "+    print('hello, world')\n+    sys.stdout.flush()\n*** End Patch\n"
    )
    server.script(Reply(text="I will greet the world.", tool_calls=[ToolCall("apply_patch", {"patch": patch})]))
    app = frozen(make_app(WINDOW, 'approval_policy="untrusted"'))

    async def run(pilot):
        await type_text(pilot, "greet the world")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the modal")
        await wait_until(pilot, lambda: app.screen.armed, what="the modal to take keys")
        await pilot.pause(0.1)

    assert snap_compare(app, terminal_size=SIZE, run_before=run)


def test_status_bar_at_a_narrow_width(snap_compare, make_app):
    app = frozen(make_app(WINDOW))

    async def settle(pilot):
        await wait_until(pilot, lambda: app.status.count is not None, what="the initial token count")
        app.status.set_tokens(
            ev.TokenCount(
                Usage(), Usage(input_tokens=123_456, cached_input_tokens=100_000, output_tokens=4_321), 31_000, 95_000
            )
        )
        app.status.set_context_event("compacted 182k → 24k")
        await pilot.pause()

    assert snap_compare(app, terminal_size=(60, 16), run_before=settle)
