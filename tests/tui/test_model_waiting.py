"""The TUI's activity line says "waiting for the model… N s" while no answer arrives, and goes
back to "working" when one does (fault 1 of issue 16)."""

from __future__ import annotations

from agent_cli.session import model_wait
from agent_cli.tui.widgets.assistant_message import AssistantMessage
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until


async def test_the_activity_line_shows_the_wait(make_app, server, monkeypatch):
    monkeypatch.setattr(model_wait, "NOTICE_EVERY_S", 0.2)
    server.script(Reply(text="slow answer", chunk_size=20, delay=1.5))  # role chunk, then 1.5 s of nothing
    app = make_app()
    labels: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.activity.label.startswith("waiting for the model"), what="the wait")
        labels.append(app.activity.label)
        await wait_until(pilot, lambda: app.activity.label == "working", what="the answer")
        await wait_idle(pilot)
        assert [m.text for m in app.transcript.query(AssistantMessage)] == ["slow answer"]
    assert labels[0].startswith("waiting for the model… ") and labels[0].endswith(" s")
