"""Secrets stay out of hooks and out of query strings (issue 27, item 4): real `agent exec` runs."""

from __future__ import annotations

import pytest

from agent_cli.tools.shell_env import EnvPolicy, command_env
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply

SECRETS = {
    "GH_TOKEN": "ghp_hooksecret",
    "DATABASE_URL": "postgres://u:pw-hook-secret@db.internal/app",
    "FEED_URL": "https://feeds.example/x?user=me&token=feed-hook-secret",
    "PLAIN_SETTING": "visible-to-hooks",
}


def test_hooks_get_the_scrubbed_environment_with_the_same_opt_in(server, isolated_home, tmp_path):
    (isolated_home / "config.toml").write_text(
        "[shell_environment_policy]\nkeep = ['GH_TOKEN']\n[[hooks.UserPromptSubmit]]\ncommand = 'env > hook-env.txt'\n"
    )
    server.script(Reply(text="done"))
    env = {**provider_env(server, "openai-chat"), "AGENT_HOME": str(isolated_home), **SECRETS}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "go"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    seen = (tmp_path / "hook-env.txt").read_text()
    assert "OPENAI_API_KEY" not in seen and "test-key" not in seen  # the provider's key
    assert "pw-hook-secret" not in seen and "feed-hook-secret" not in seen
    assert "GH_TOKEN=ghp_hooksecret" in seen  # kept on purpose, as for commands
    assert "PLAIN_SETTING=visible-to-hooks" in seen and "AGENT_HOOK_EVENT=UserPromptSubmit" in seen


@pytest.mark.parametrize(
    "value",
    [
        "https://api.example/v1?token=abc123",
        "https://maps.example/api?key=AIzaXYZ&q=x",
        "https://acct.blob.core.windows.net/c/b?sv=2022&se=2030&sig=abcdef%3D",
        "https://bucket.s3.amazonaws.com/o?X-Amz-Credential=AK%2F&X-Amz-Signature=ff00",
        "wss://push.example/socket?access_token=t0k",
        "https://hooks.example/in?api_key=k&x=1",
    ],
)
def test_query_string_credentials_are_dropped(value):
    assert "LINK" not in command_env(EnvPolicy(), {"LINK": value})


@pytest.mark.parametrize(
    "value",
    [
        "https://example.com/search?q=token&page=2",
        "https://example.com/docs?monkey=1",
        "https://example.com/?keyboard=us",
    ],
)
def test_ordinary_query_strings_stay(value):
    assert command_env(EnvPolicy(), {"LINK": value})["LINK"] == value
