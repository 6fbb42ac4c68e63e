"""The TUI loads the tokenizer in the background while the user types (agent exec does not)."""

from __future__ import annotations

from agent_cli.context import tokens
from tests.fake_server import Reply
from tests.tui.conftest import SIZE
from tests.tui.helpers import type_text, wait_idle, wait_until


async def test_the_tokenizer_loads_before_the_first_turn_and_every_count_is_exact(make_app, server, monkeypatch):
    monkeypatch.setattr(tokens, "_loaded", {})  # as in a fresh process
    monkeypatch.setattr(tokens, "_requested", set())
    server.script(Reply(text="hi"))
    app = make_app('model="gpt-4o"')
    async with app.run_test(size=SIZE) as pilot:
        counter = app.session.tokens
        await wait_until(pilot, lambda: counter.exact, 60, "the tokenizer to load")
        assert counter.counting_method == "tiktoken o200k_base"
        await type_text(pilot, "hello")
        await pilot.press("enter")
        await wait_idle(pilot)
        assert app.status.count.counting_method == "tiktoken o200k_base"
    server.assert_done()
