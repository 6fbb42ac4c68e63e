"""Fixtures for the TUI tests: a repository folder, a Config pointed at the fake server, the app."""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from agent_cli.config import load_config
from tests.conftest import git_init
from tests.fake_server import FakeModelServer

SIZE = (100, 36)


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    """A git repository at ``~/repo`` (HOME is the test's tmp dir, so the app shows ``~/repo``)."""
    monkeypatch.setenv("HOME", str(tmp_path))
    root = tmp_path / "repo"
    (root / "src").mkdir(parents=True)
    (root / "README.md").write_text("# demo\n")
    (root / "src" / "main.py").write_text("print('hi')\n")
    (root / "src" / "helpers.py").write_text("X = 1\n")
    (root / ".gitignore").write_text("ignored.txt\n")
    (root / "ignored.txt").write_text("not for completion\n")
    git_init(root)
    subprocess.run(["git", "add", "README.md", "src/main.py"], cwd=root, check=True)
    return root


@pytest.fixture
def make_config(repo, server: FakeModelServer, monkeypatch) -> Callable[..., object]:
    monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")

    def make(*overrides: str):
        return load_config(repo, ['model_provider="openai-chat"', 'model="test-model"', *overrides])

    return make


@pytest.fixture
def make_app(make_config):
    from agent_cli.tui.app import AgentApp

    def make(*overrides: str, prompt: str | None = None) -> AgentApp:
        return AgentApp(make_config(*overrides), prompt)

    return make
