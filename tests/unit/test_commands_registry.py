"""Which commands exist, how a line is parsed, and what an unknown name suggests."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.commands.errors import InputError
from agent_cli.commands.registry import CommandTable, list_commands, parse_slash
from agent_cli.config import load_config
from agent_cli.runtime import open_session
from tests.conftest import git_init

BUILTIN_NAMES = [
    "review",
    "compact",
    "autocompact",
    "init",
    "status",
    "context",
    "cost",
    "lint",
    "test",
    "model",
    "mode",
    "diff",
    "skills",
    "memory",
    "plugins",
    "permissions",
    "agents",
    "mcp",
    "ps",
    "undo",
    "rewind",
    "fork",
    "copy",
    "export",
    "new",
    "resume",
    "rename",
    "worktree",
    "login",
    "logout",
    "help",
    "quit",
    "detach",
]


@pytest.fixture
def repo(tmp_path: Path, isolated_home: Path) -> Path:
    root = git_init(tmp_path / "repo")
    commands = root / ".agent" / "commands"
    (commands / "git").mkdir(parents=True)
    (commands / "git" / "commit.md").write_text(
        "---\ndescription: Commit with a good message\nargument-hint: [message]\n---\nCommit: $ARGUMENTS\n"
    )
    (commands / "status.md").write_text("a file that tries to replace /status")
    (isolated_home / "commands").mkdir()
    (isolated_home / "commands" / "standup.md").write_text("Summarize yesterday's commits.")
    return root


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("/status", ("status", "")),
        ("  /review  @src/app.py --base main  ", ("review", "@src/app.py --base main")),
        ("/git:commit fix the build", ("git:commit", "fix the build")),
        ("/mycmd line one\nline two", ("mycmd", "line one\nline two")),
        ("/usr/bin/env is broken", None),  # a path, not a command
        ("please run /status", None),
        ("hello", None),
        ("/3d", None),
    ],
)
def test_parse_slash(text, parsed):
    assert parse_slash(text) == parsed


def test_a_lone_slash_is_an_error():
    with pytest.raises(InputError, match="no command name"):
        parse_slash("/")


def test_list_commands_has_builtins_then_custom_commands_with_descriptions(repo):
    session = open_session(load_config(repo), interactive=False)
    infos = list_commands(session)
    names = [info.name for info in infos]
    assert names == [*BUILTIN_NAMES, "git:commit", "standup"]
    commit = next(info for info in infos if info.name == "git:commit")
    assert (commit.description, commit.argument_hint, commit.source) == (
        "Commit with a good message",
        "[message]",
        "repo",
    )
    standup = next(info for info in infos if info.name == "standup")
    assert standup.source == "user" and "custom command" in standup.description
    assert next(info for info in infos if info.name == "status").needs_idle is False
    assert next(info for info in infos if info.name == "review").needs_idle is True


def test_a_builtin_wins_over_a_command_file_and_the_file_is_reported(repo, isolated_home):
    table = CommandTable.load(repo, isolated_home)
    assert table.resolve("status").builtin is not None
    assert any("status.md" in warning and "built-in" in warning for warning in table.warnings)


def test_aliases_resolve(repo, isolated_home):
    assert CommandTable.load(repo, isolated_home).resolve("exit").builtin.name == "quit"


@pytest.mark.parametrize(
    "typed, expected",
    [
        ("revew", "review"),
        ("stauts", "status"),
        ("commit", "git:commit"),  # the last part of a namespaced name
        ("comp", "compact"),  # a prefix
    ],
)
def test_unknown_names_suggest_close_matches(repo, isolated_home, typed, expected):
    with pytest.raises(InputError) as caught:
        CommandTable.load(repo, isolated_home).resolve(typed)
    assert expected in caught.value.suggestions
    assert f"/{expected}" in caught.value.message
    assert f"unknown command /{typed}" in caught.value.message
