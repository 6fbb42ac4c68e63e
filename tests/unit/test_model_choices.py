"""The /model picker offers every model the session used before (commands/model_check.py)."""

from __future__ import annotations

from agent_cli.commands.model_check import used_models
from agent_cli.config import load_config
from agent_cli.runtime import open_session


def test_models_switched_to_earlier_are_offered_again(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    (tmp_path / "repo").mkdir()
    config = load_config(tmp_path / "repo", ['model_provider="openai"', 'model="gpt-4.1"'])
    session = open_session(config, interactive=False)
    try:
        session.switch_model("gpt-5")
        session.switch_model("gpt-5-mini")
        assert used_models(session) == ["gpt-4.1", "gpt-5-mini", "gpt-5"]  # configured, current, earlier
    finally:
        session.rollout.close()
