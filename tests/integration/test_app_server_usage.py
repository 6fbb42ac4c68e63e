"""``account/usage/read`` with a thread: the tokens a thread's model requests used and their
estimated cost, for a saved session (read from its file's running totals) and for a loaded one
(live), as the web page's session list shows them; answers checked against Codex's schema."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.app_server.client import AppServerClient, thread_text
from agent_cli.store.catalog import list_sessions
from agent_cli.store.thread_ids import session_uuid
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, Usage

pytestmark = pytest.mark.timeout(120)
PRICES = ["-c", "model_prices.test-model.input=2", "-c", "model_prices.test-model.output=10"]  # USD per million


@pytest.fixture
def repo(tmp_path) -> Path:
    return git_init(tmp_path / "repo")


async def test_a_threads_tokens_and_cost_saved_and_live(server, repo, app_servers, isolated_home):
    server.script(
        Reply(text="made by exec", usage=Usage(input_tokens=1000, output_tokens=100)),
        Reply(text="one more", usage=Usage(input_tokens=3000, output_tokens=300)),
    )
    done = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "hello"], cwd=repo,
                     env=provider_env(server, "openai-chat"))  # fmt: skip
    assert done.returncode == 0, done.stderr
    thread_id = session_uuid(list_sessions(isolated_home)[0].id)
    running = app_servers(repo, "--listen", "unix://", *PRICES)
    client = await AppServerClient.connect(running.url)
    await client.initialize()

    saved = (await client.request("account/usage/read", {"threadId": thread_id}))["threadUsage"]
    assert saved["threadId"] == thread_id
    assert saved["groups"][0] | {"model": "test-model"} == saved["groups"][0]
    assert (saved["groups"][0]["inputTokens"], saved["groups"][0]["outputTokens"]) == (1000, 100)
    assert saved["estimatedUsageUsdMicros"] == 1000 * 2 + 100 * 10  # $0.003

    await client.request("thread/resume", {"threadId": thread_id})
    await client.request("turn/start", {"threadId": thread_id, "input": thread_text("more")})
    await client.notification("turn/completed")
    live = (await client.request("account/usage/read", {"threadId": thread_id}))["threadUsage"]
    assert live["groups"][0]["totalTokens"] == 1000 + 100 + 3000 + 300
    assert live["estimatedUsageUsdMicros"] == 4000 * 2 + 400 * 10

    account = await client.request("account/usage/read", {})
    assert account["threadUsage"] is None
    await client.close()
