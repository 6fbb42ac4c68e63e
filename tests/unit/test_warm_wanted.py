"""When the launcher hands `agent exec` to the warm server (agent_cli/warm/client.py): the switches
that turn it off are read without loading the program."""

from __future__ import annotations

import pytest

from agent_cli.warm.client import turned_off_in_config, wanted


@pytest.fixture
def daemon_allowed(monkeypatch):
    monkeypatch.delenv("AGENT_NO_DAEMON", raising=False)


def test_only_exec_and_not_when_turned_off(daemon_allowed, monkeypatch):
    assert wanted(["exec", "hi"])
    assert not wanted(["hi"])
    assert not wanted(["exec", "--no-daemon", "hi"])
    monkeypatch.setenv("AGENT_NO_DAEMON", "1")
    assert not wanted(["exec", "hi"])
    monkeypatch.setenv("AGENT_NO_DAEMON", "0")
    assert wanted(["exec", "hi"])
    monkeypatch.setenv("OPENAI_LOG", "debug")  # read by the SDK only when it is imported
    assert not wanted(["exec", "hi"])


@pytest.mark.parametrize(
    ("argv", "off"),
    [
        (["exec", "-c", "exec_daemon=false", "hi"], True),
        (["exec", "--config", "exec_daemon = false", "hi"], True),
        (["exec", "--config=exec_daemon=false", "hi"], True),
        (["exec", "-c", "exec_daemon=true", "hi"], False),
        (["exec", "-c"], False),
    ],
)
def test_a_config_override_turns_it_off(daemon_allowed, argv, off):
    assert turned_off_in_config(argv) is off


@pytest.mark.parametrize(
    ("text", "off"),
    [
        ("exec_daemon = false\n", True),
        ("exec_daemon = true\n", False),
        ('model = "gpt-5"\n', False),
        ("exec_daemon = [broken\n", True),  # the run reports the broken file; it starts cold
    ],
)
def test_the_users_config_file_turns_it_off(daemon_allowed, isolated_home, text, off):
    (isolated_home / "config.toml").write_text(text)
    assert turned_off_in_config(["exec", "hi"]) is off
    assert wanted(["exec", "hi"]) is not off
