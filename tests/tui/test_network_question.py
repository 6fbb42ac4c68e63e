"""Claude Code's "Network request outside of sandbox" question, answered in the real TUI while a
real sandboxed curl waits on it: Yes (this session, asked once per host), Yes and don't ask again
(saved to the user's config.toml), No (refused, and the model reads why)."""

from __future__ import annotations

import shutil
import tomllib

import pytest

from agent_cli.sandbox.policy import detect_mechanism, proxy_route_works
from agent_cli.tui.screens.network_question import NetworkQuestionScreen
from tests.fake_server import Reply, ToolCall
from tests.network_helpers import PAGE, serve_origin
from tests.tui.conftest import SIZE
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

pytestmark = [
    pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed"),
    pytest.mark.skipif(
        detect_mechanism().name == "none" or not proxy_route_works(detect_mechanism().name),
        reason="no sandbox here that can give commands a network namespace",
    ),
]


async def answer(pilot, app, key: str, host: str) -> None:
    await wait_until(pilot, lambda: isinstance(app.screen, NetworkQuestionScreen), timeout=30, what="the question")
    await wait_until(pilot, lambda: app.screen.armed, what="the question to take keys")
    text = screen_text(app)
    assert "Network request outside of sandbox" in text and f"Host: {host}" in text
    await pilot.press(key)


async def test_the_question_allows_once_always_or_not(make_app, server, repo, isolated_home):
    with serve_origin() as origin:

        def curl(host: str) -> str:
            return f"curl -sSf http://{host}:{origin.port}/"

        server.script(
            Reply(tool_calls=[ToolCall("shell", {"command": f"{curl('once.test')} && {curl('once.test')}"})]),
            Reply(tool_calls=[ToolCall("shell", {"command": curl("always.test")})]),
            Reply(tool_calls=[ToolCall("shell", {"command": f"{curl('never.test')}; echo exit=$?"})]),
            Reply(tool_calls=[ToolCall("shell", {"command": f"{curl('127.0.0.2')}; echo exit=$?"})]),
            Reply(text="done"),
        )
        hosts = '{"once.test" = "127.0.0.1", "always.test" = "127.0.0.1", "never.test" = "127.0.0.1"}'
        app = make_app('sandbox.network.allowed_domains=["pypi.test"]', f"sandbox.network.hosts={hosts}")
        async with app.run_test(size=SIZE) as pilot:
            await type_text(pilot, "fetch things")
            await pilot.press("enter")
            await answer(pilot, app, "y", "once.test")
            await answer(pilot, app, "a", "always.test")  # once.test's second request was not asked about
            await answer(pilot, app, "n", "never.test")
            await wait_idle(pilot, timeout=30)  # 127.0.0.2 is not asked about
    outputs = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    once, always, never, loopback = outputs
    assert once.count(PAGE.decode()) == 2 and "Exit code: 0" in once
    assert PAGE.decode() in always
    assert "refused never.test" in never and "you refused it for this session" in never
    # a loopback address is never asked about ("don't ask again" would open it for good): only a
    # name listed exactly (or mapped by you) reaches one
    assert "refused 127.0.0.2" in loopback and "only an entry naming it exactly" in loopback
    saved = tomllib.loads((isolated_home / "config.toml").read_text())
    assert saved["sandbox"]["network"]["allowed_domains"] == ["always.test"]
    assert origin.hosts == [f"once.test:{origin.port}"] * 2 + [f"always.test:{origin.port}"]
