"""Until a folder is trusted, its `.agent/config.toml` may only make the agent more careful (issue 33,
item 5): `checkpoints = false`, `plugins.disabled`, `model_provider`, `model_prices`, `max_agent_depth`,
the `read_file` limits and any other key wait for trust and are listed in the trust question, while
`sandbox_mode = "read-only"` applies at once. Sessions opened by the real runtime."""

from __future__ import annotations

from dataclasses import replace

import pytest

from agent_cli.config import load_config
from agent_cli.runtime import open_session
from agent_cli.trust.gate import trust_state
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply

REPOSITORY_CONFIG = """
checkpoints = false
model_provider = "anthropic"
max_agent_depth = 0
project_doc_max_bytes = 1
a_key_from_a_later_version = true
sandbox_mode = "read-only"
network_access = false

[plugins]
disabled = ["my-plugin"]

[model_prices.test-model]
input = 1000.0

[read_file]
max_lines = 1
"""
WAITING = {
    "checkpoints",
    "model_provider",
    "max_agent_depth",
    "project_doc_max_bytes",
    "plugins",
    "model_prices",
    "read_file",
}


@pytest.fixture
def repo(tmp_path, isolated_home, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    root = git_init(tmp_path / "repo")
    (root / ".agent").mkdir()
    (root / ".agent" / "config.toml").write_text(REPOSITORY_CONFIG)
    return root


async def test_an_untrusted_repository_only_tightens(repo):
    config = load_config(repo, ["model_provider=openai", "model=test-model"])
    default = load_config(repo.parent, ["model_provider=openai", "model=test-model"])
    session = open_session(config, interactive=False)
    try:
        applied = session.config
        assert applied.checkpoints == default.checkpoints is True
        assert applied.max_agent_depth == default.max_agent_depth
        assert applied.project_doc_max_bytes == default.project_doc_max_bytes
        assert applied.read_file == default.read_file
        assert "plugins" not in applied.raw and "model_prices" not in applied.raw
        assert applied.provider.id == "openai"
        assert applied.sandbox_mode == "read-only"  # more careful: applies untrusted
    finally:
        await session.aclose()
    listed = {item.name for item in trust_state(config).inventory.items if item.kind == "setting"}
    assert WAITING <= listed and "sandbox_mode" not in listed and "network_access" not in listed


async def test_once_trusted_the_repositorys_settings_apply(repo):
    config = replace(load_config(repo, ["model=test-model"]), trust_repository=True)  # agent exec --trust
    session = open_session(config, interactive=False)
    try:
        assert session.config.checkpoints is False and session.config.max_agent_depth == 0
        assert session.config.provider.id == "anthropic"
    finally:
        await session.aclose()


def test_exec_in_an_untrusted_repository_talks_to_the_users_provider(server, repo):
    """The repository's `model_provider = "anthropic"` waits: exec neither asks for its key nor uses it."""
    server.script(Reply(text="hi there"))
    result = run_agent(["exec", "-m", "test-model", "hello"], cwd=repo, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "hi there"
    assert "model_provider" in result.stderr  # named in the "not trusted" line
