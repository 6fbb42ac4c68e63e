"""`/cost` and the cost row of `/status`: the session's tokens and their estimated price (issue 35, item 14)."""

from __future__ import annotations

from tests.fake_server import Reply, Usage
from tests.tui.helpers import screen_text, wait_idle, wait_until

PRICES = 'model_prices={"test-model"={input=2.0, cached_input=1.0, output=10.0}}'


async def test_cost_prices_the_sessions_tokens(make_app, server):
    server.script(Reply(text="hi", usage=Usage(input_tokens=100_000, cached_input_tokens=50_000, output_tokens=10_000)))
    app = make_app(PRICES)
    async with app.run_test(size=(120, 36)) as pilot:
        app.send("hello")
        await wait_idle(pilot)
        app.send("/cost")
        await wait_until(pilot, lambda: "cost" in screen_text(app) and "$" in screen_text(app), what="the cost")
        # 50k uncached x $2 + 50k cached x $1 + 10k out x $10, per million: $0.25
        assert "100,000 in (50,000 cached), 10,000 out; about $0.2500 at test-model's prices" in screen_text(app)
        app.send("/status")
        await wait_until(pilot, lambda: screen_text(app).count("$0.2500") == 2, what="the status row")
    assert len(server.requests) == 1


async def test_cost_without_a_price_says_how_to_give_one(make_app, server):
    app = make_app()
    async with app.run_test(size=(120, 36)) as pilot:
        app.send("/cost")
        await wait_until(pilot, lambda: "no price known for test-model" in screen_text(app), what="the cost")
