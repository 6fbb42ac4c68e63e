"""The trust question in the TUI: a repository's .mcp.json server and hook write nothing until the
user trusts the folder; the answer is remembered per folder and content."""

from __future__ import annotations

from agent_cli.trust.store import TrustStore
from agent_cli.tui.screens.trust import TrustScreen
from tests.fake_server import Reply
from tests.integration.test_trust import marker_repo, markers
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until


def make_app(repo, server, monkeypatch, *overrides: str):
    from agent_cli.config import load_config
    from agent_cli.tui.app import AgentApp

    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return AgentApp(load_config(repo, ['model_provider="openai-chat"', 'model="test-model"', *overrides]), None)


async def send(app, pilot, text: str) -> None:
    await type_text(pilot, text)
    await pilot.press("enter")
    await wait_idle(pilot)


async def test_nothing_runs_before_trust_and_everything_after(server, tmp_path, monkeypatch, isolated_home):
    repo = marker_repo(tmp_path)
    server.script(Reply(text="after trust"))
    app = make_app(repo, server, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the trust question")
        shown = screen_text(app)
        assert "MCP server marker" in shown and "hook SessionStart: touch" in shown  # exactly what would run
        assert ".claude/settings.json" in shown
        untrusted = app.session
        assert untrusted.mcp is None and not untrusted.hooks.table.get("SessionStart")
        assert markers(tmp_path) == []
        await pilot.press("t")
        await wait_until(pilot, lambda: app.session is not untrusted, what="the trusted session")
        await send(app, pilot, "hello")
        await wait_until(pilot, lambda: len(markers(tmp_path)) == 3, timeout=30, what="the markers")
    assert TrustStore(isolated_home).answer(repo, app.session.trust.inventory.digest) is True


async def test_a_folder_not_trusted_runs_nothing_and_is_not_asked_again(server, tmp_path, monkeypatch, isolated_home):
    repo = marker_repo(tmp_path)
    server.script(Reply(text="without its code"), Reply(text="still without"))
    app = make_app(repo, server, monkeypatch)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the trust question")
        await pilot.press("n")
        await wait_until(pilot, lambda: not isinstance(app.screen, TrustScreen), what="the answer")
        await send(app, pilot, "hello")
        assert "not trusted" in screen_text(app)
    assert markers(tmp_path) == [] and len(server.requests) == 1
    again = make_app(repo, server, monkeypatch)
    async with again.run_test(size=SIZE) as pilot:
        await send(again, pilot, "hello again")
        assert not isinstance(again.screen, TrustScreen)
    assert markers(tmp_path) == [] and len(server.requests) == 2


async def test_a_config_warning_is_shown_once_across_the_trust_answer(server, tmp_path, monkeypatch, isolated_home):
    """Trusting the folder starts the session over; what its config said is not said twice."""
    repo = marker_repo(tmp_path)
    warning = "unknown config key `not_a_setting`"
    app = make_app(repo, server, monkeypatch, "not_a_setting=1")
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.screen, TrustScreen), what="the trust question")
        await wait_until(pilot, lambda: warning in screen_text(app), what="the warning, under the question")
        untrusted = app.session
        await pilot.press("t")
        await wait_until(pilot, lambda: app.session is not untrusted, what="the trusted session")
        await wait_idle(pilot)
        await pilot.pause(0.2)  # a second copy would be drawn by now
        assert screen_text(app).count(warning) == 1
