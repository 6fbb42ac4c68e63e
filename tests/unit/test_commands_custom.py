"""Custom command files: discovery, precedence, namespacing, front matter and substitution."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.commands.custom import (
    allowed_tool_names,
    command_roots,
    load_custom_commands,
    split_arguments,
    substitute,
)
from tests.conftest import git_init


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return git_init(tmp_path / "repo")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


# --- discovery ----------------------------------------------------------------------------------


def test_subfolders_give_namespaced_names(repo, home):
    write(repo / ".agent/commands/git/commit.md", "Commit the staged changes.")
    write(repo / ".agent/commands/deploy/aws/prod.md", "Deploy.")
    write(repo / ".agent/commands/fix.md", "Fix it.")
    found = load_custom_commands(repo, home)
    assert sorted(found.commands) == ["deploy:aws:prod", "fix", "git:commit"]
    assert found.commands["git:commit"].body == "Commit the staged changes."
    assert found.warnings == ()


def test_the_repository_wins_over_the_user_folder(repo, home):
    write(repo / ".agent/commands/fix.md", "repo version")
    write(home / "commands/fix.md", "user version")
    write(home / "commands/only-mine.md", "mine")
    found = load_custom_commands(repo, home)
    assert found.commands["fix"].body == "repo version"
    assert found.commands["fix"].source == "repo"
    assert found.commands["only-mine"].source == "user"


def test_commands_are_found_from_a_subfolder_of_the_repository(repo, home):
    write(repo / ".agent/commands/fix.md", "Fix it.")
    sub = repo / "src" / "pkg"
    sub.mkdir(parents=True)
    assert "fix" in load_custom_commands(sub, home).commands
    assert command_roots(sub, home)[0] == ("repo", repo.resolve() / ".agent" / "commands")


def test_outside_a_repository_the_working_directory_is_the_project(tmp_path, home):
    write(tmp_path / "plain/.agent/commands/hello.md", "Hello.")
    assert "hello" in load_custom_commands(tmp_path / "plain", home).commands


def test_non_markdown_files_and_unusable_names_are_ignored(repo, home):
    write(repo / ".agent/commands/notes.txt", "not a command")
    write(repo / ".agent/commands/has space.md", "bad name")
    found = load_custom_commands(repo, home)
    assert found.commands == {}
    assert len(found.warnings) == 1 and "has space.md" in found.warnings[0]


# --- front matter -------------------------------------------------------------------------------


def test_front_matter_fields_are_read(repo, home):
    write(
        repo / ".agent/commands/pr.md",
        (
            "---\n"
            "description: Open a pull request\n"
            "argument-hint: <title> [reviewer]\n"
            "model: test-model-2\n"
            "allowed-tools: Bash(git push:*), read_file\n"
            "---\n"
            "Open a PR titled $1.\n"
        ),
    )
    command = load_custom_commands(repo, home).commands["pr"]
    assert command.description == "Open a pull request"
    assert command.argument_hint == "<title> [reviewer]"
    assert command.model == "test-model-2"
    assert command.allowed_tools == ("Bash(git push:*)", "read_file")
    assert command.body == "Open a PR titled $1."


def test_a_hint_that_yaml_reads_as_a_list_stays_readable(repo, home):
    write(repo / ".agent/commands/a.md", "---\nargument-hint: [message]\n---\nbody")
    write(repo / ".agent/commands/b.md", "---\nargument-hint: [pr-number] [priority]\ndescription: two\n---\nbody")
    commands = load_custom_commands(repo, home).commands
    assert commands["a"].argument_hint == "[message]"
    assert commands["b"].argument_hint == "[pr-number] [priority]"  # invalid YAML, read as plain text
    assert commands["b"].description == "two"


@pytest.mark.parametrize(
    "text, problem",
    [
        ("---\ndescription: never closed\nbody", "not closed"),
        ("---\n- a\n- b\n---\nbody", "mapping"),
        ("---\ndescription: [unclosed\n  nested: {\n---\nbody", "invalid YAML"),
        ("---\nallowed-tools: {a: 1}\n---\nbody", "allowed-tools"),
        ("---\ndescription: {a: 1}\n---\nbody", "description"),
    ],
)
def test_broken_front_matter_is_a_warning_and_the_file_is_skipped(repo, home, text, problem):
    write(repo / ".agent/commands/broken.md", text)
    write(repo / ".agent/commands/good.md", "fine")
    found = load_custom_commands(repo, home)
    assert list(found.commands) == ["good"]
    assert len(found.warnings) == 1
    assert "broken.md" in found.warnings[0] and problem in found.warnings[0] and "skipped" in found.warnings[0]


def test_a_broken_repo_file_lets_the_user_file_of_the_same_name_through(repo, home):
    write(repo / ".agent/commands/fix.md", "---\nnot closed")
    write(home / "commands/fix.md", "user fix")
    found = load_custom_commands(repo, home)
    assert found.commands["fix"].body == "user fix"
    assert len(found.warnings) == 1


# --- substitution -------------------------------------------------------------------------------


def test_arguments_and_positional_placeholders():
    template = substitute("All: $ARGUMENTS. 1: $1, 2: $2, 3: $3, missing: [$4].", 'fix "the login bug" now')
    assert template.text == 'All: fix "the login bug" now. 1: fix, 2: the login bug, 3: now, missing: [].'


def test_dollar_dollar_is_a_literal_dollar_and_ten_is_not_one():
    assert substitute("costs $$5, $10, $1x, $ARGUMENTSX", "a b").text == "costs $5, $10, ax, $ARGUMENTSX"


def test_arguments_are_appended_when_the_body_has_no_placeholder():
    assert substitute("Write tests for this.", "src/app.py").text == "Write tests for this.\n\nsrc/app.py"
    assert substitute("Write tests.", "").text == "Write tests."
    assert substitute("Price in $$.", "x").text == "Price in $.\n\nx"  # $$ is not an argument placeholder


def test_values_are_substituted_once():
    # a value that looks like a placeholder stays as typed
    template = substitute("[$1] [$2] [$ARGUMENTS]", "$2 $ARGUMENTS")
    assert template.text == "[$2] [$ARGUMENTS] [$2 $ARGUMENTS]"


def test_substituted_values_are_marked_as_arguments():
    template = substitute("Run !`git log` for $1", "@x.py")
    origins = {piece.text: piece.origin for piece in template.pieces}
    assert origins["Run !`git log` for "] == "template"
    assert origins["@x.py"] == "argument"


def test_unbalanced_quotes_fall_back_to_whitespace_words():
    assert split_arguments("it's broken") == ["it's", "broken"]
    assert substitute("$1|$2", "it's broken").text == "it's|broken"


def test_allowed_tools_map_to_our_tool_names():
    known = ["shell", "read_file", "grep", "list_dir", "apply_patch", "update_plan"]
    names, unknown = allowed_tool_names(("Bash(git status:*)", "Read", "grep", "WebFetch"), known)
    assert names == ["shell", "read_file", "grep"]
    assert unknown == ["WebFetch"]
