"""Credentials inside values are scrubbed from commands' environment (fault 5 of issue 16)."""

from __future__ import annotations

import subprocess

import pytest

from agent_cli.tools.shell_env import EnvPolicy, command_env

ENVIRON = {
    "PATH": "/usr/bin:/bin",
    "DATABASE_URL": "postgres://user:pass@db.internal:5432/app",
    "REDIS_URL": "redis://:s3cret@cache:6379/0",
    "PIP_EXTRA_INDEX_URL": "https://pypi.org/simple https://ci:tok@pkgs.example/simple",
    "HOMEPAGE": "https://example.com/a@b",  # no password: kept
    "PLAIN_URL": "postgres://user@db/app",  # a user but no password: kept
    "NOTES": "mail me: a:b@c (not a URL)",
}


@pytest.mark.parametrize("name", ["DATABASE_URL", "REDIS_URL", "PIP_EXTRA_INDEX_URL"])
def test_values_with_url_credentials_are_dropped(name):
    assert name not in command_env(EnvPolicy(), ENVIRON)


@pytest.mark.parametrize("name", ["HOMEPAGE", "PLAIN_URL", "NOTES", "PATH"])
def test_values_without_a_password_stay(name):
    assert command_env(EnvPolicy(), ENVIRON)[name] == ENVIRON[name]


def test_a_kept_name_keeps_its_credentials():
    env = command_env(EnvPolicy.from_table({"keep": ["DATABASE_URL"]}), ENVIRON)
    assert env["DATABASE_URL"] == ENVIRON["DATABASE_URL"] and "REDIS_URL" not in env


def test_a_real_command_never_sees_them():
    env = command_env(EnvPolicy(), ENVIRON)
    shown = subprocess.run(["/usr/bin/env"], env=env, capture_output=True, text=True, check=True).stdout
    assert "pass@" not in shown and "s3cret" not in shown and "HOMEPAGE=" in shown
