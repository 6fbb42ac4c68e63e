"""The pieces behind issue 33's items 1-3: reading git config as git does, sanitizing a repository
made during the session, the index that finds new .git folders, and what apply_patch protects."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_cli.sandbox.git_config import Unparsed, hooks_and_includes, parse
from agent_cli.sandbox.guard import guarded
from agent_cli.sandbox.policy import WORKSPACE_WRITE, SandboxPolicy
from agent_cli.sandbox.repo_index import RepoIndex
from agent_cli.sandbox.repo_sanitize import sanitize
from tests.conftest import git_init


def git_config_list(path: Path) -> list[str]:
    done = subprocess.run(["git", "config", "--file", str(path), "--list"], capture_output=True, text=True, check=True)
    return done.stdout.splitlines()


def test_config_is_read_as_git_reads_it(tmp_path):
    text = (
        '[core] hooksPath = ".hu" sky # comment\n'
        '[Remote "Or\\"igin"]\n\turl = a\\\n  b\n'
        '[includeIf "gitdir:~/w/"]\n\tpath = ../inc ; c\n'
        "[alias]\n\tst\n"
    )
    (tmp_path / "config").write_text(text)
    entries = parse(text, tmp_path / "config")
    assert [(e.name, e.value) for e in entries] == [
        ("core.hookspath", ".hu sky"),
        ('remote.Or"igin.url', "a  b"),
        ("includeif.gitdir:~/w/.path", "../inc"),
        ("alias.st", None),
    ]
    assert git_config_list(tmp_path / "config")[0] == "core.hookspath=.hu sky"
    with pytest.raises(Unparsed):
        parse("key = outside\n", tmp_path / "config")


def test_hooks_folders_and_includes_are_found(tmp_path):
    (tmp_path / "config").write_text("[include]\n\tpath = more\n[core]\n\thooksPath = .husky\n")
    (tmp_path / "more").write_text("[core]\n\thooksPath = /abs/hooks\n[include]\n\tpath = ../third\n")
    found = hooks_and_includes(tmp_path / "work", [tmp_path / "config", tmp_path / "missing"])
    assert found == [tmp_path / "more", Path("/abs/hooks"), tmp_path.parent / "third", tmp_path / "work" / ".husky"]


def test_a_new_repository_keeps_only_what_runs_nothing(tmp_path):
    repo = git_init(tmp_path / "new")
    config = repo / ".git" / "config"
    subprocess.run(["git", "-C", str(repo), "remote", "add", "origin", "https://example.invalid/x.git"], check=True)
    for key, value in [("core.fsmonitor", "touch x"), ("alias.st", "!touch x"), ("filter.f.smudge", "touch x")]:
        subprocess.run(["git", "-C", str(repo), "config", key, value], check=True)
    (repo / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\ntouch x\n")
    refused = sanitize(repo / ".git", tmp_path / "quarantine", lambda path: False)
    kept = git_config_list(config)
    assert "remote.origin.url=https://example.invalid/x.git" in kept and "core.bare=false" in kept
    assert not [line for line in kept if line.startswith(("core.fsmonitor", "alias.", "filter."))]
    assert not (repo / ".git" / "hooks" / "pre-commit").exists()
    assert (repo / ".git" / "hooks" / "pre-commit.sample").exists()
    assert len(refused) == 2 and "core.fsmonitor" in refused[0]
    assert len(list((tmp_path / "quarantine").rglob("pre-commit"))) == 1  # moved, not lost


def test_a_git_file_pointing_at_an_unprotected_folder_is_moved_away(tmp_path):
    (tmp_path / "evil").mkdir()
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".git").write_text("gitdir: ../evil\n")
    assert sanitize(tmp_path / "sub" / ".git", tmp_path / "q", lambda path: False)
    assert not (tmp_path / "sub" / ".git").exists() and (tmp_path / "evil").exists()


def test_the_index_finds_repositories_at_any_depth_and_new_ones_by_stat(tmp_path):
    deep = git_init(tmp_path / "a" / "b" / "c" / "d" / "e" / "f" / "g")
    vendored = git_init(tmp_path / "node_modules" / "x" / "node_modules" / "y")
    index = RepoIndex(tmp_path)
    assert index.refresh() == []
    assert index.repos == {str(deep / ".git"), str(vendored / ".git")}
    new = git_init(tmp_path / "a" / "b" / "c" / "d" / "new" / "deeper")
    (tmp_path / "a" / "b" / "c" / "d" / "e" / "moved").mkdir()
    os.rename(deep / ".git", tmp_path / "a" / "b" / "c" / "d" / "e" / "moved" / ".git")
    assert sorted(index.refresh()) == [tmp_path / "a" / "b" / "c" / "d" / "e" / "moved" / ".git", new / ".git"]
    assert str(deep / ".git") not in index.repos
    assert index.refresh() == []


def test_apply_patch_protects_dotfiles_and_hooks_folders(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    repo = git_init(tmp_path / "repo")
    subprocess.run(["git", "-C", str(repo), "config", "core.hooksPath", ".husky"], check=True)
    home = SandboxPolicy.create(WORKSPACE_WRITE, tmp_path, include_temp=False)
    assert home.write_denial(tmp_path / ".bashrc") and home.write_denial(tmp_path / ".ssh" / "authorized_keys")
    assert home.write_denial(tmp_path / ".gitconfig") and home.write_denial(repo / ".husky" / "pre-commit")
    assert home.write_denial(tmp_path / "notes.txt") is None
    (tmp_path / ".gitconfig").write_text("[core]\n\thooksPath = ~/global-hooks\n[include]\n\tpath = extra.inc\n")
    assert home.write_denial(tmp_path / "global-hooks" / "pre-push")  # the user's own config names it
    assert home.write_denial(tmp_path / "extra.inc")


def test_without_inotify_the_index_falls_back_to_stat(tmp_path):
    git_init(tmp_path / "a" / "b")
    index = RepoIndex(tmp_path)
    index.watcher = None
    index.refresh()
    new = git_init(tmp_path / "a" / "c" / "d")
    assert index.refresh() == [new / ".git"]
    assert len(index.unwatched) == len(index.dirs)


def test_what_a_mount_cannot_cover_is_undone_when_the_command_ends(tmp_path, monkeypatch):
    home = tmp_path / "home"
    (home / "dotfiles").mkdir(parents=True)
    (home / "dotfiles" / "bashrc").write_text("# mine\n")
    (home / ".bashrc").symlink_to("dotfiles/bashrc")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "agent"))
    roots = (home.resolve(),)
    with guarded(roots, roots) as guard:
        (home / ".bashrc").unlink()
        (home / ".bashrc").write_text("touch /tmp/x\n")  # the link replaced by a file
        (home / ".profile").write_text("touch /tmp/x\n")  # a start-up file that was missing
        (home / "notes.txt").write_text("fine\n")
    assert os.readlink(home / ".bashrc") == "dotfiles/bashrc"
    assert not (home / ".profile").exists() and (home / "notes.txt").exists()
    assert len(guard.refused) == 2
    assert len(list((tmp_path / "agent" / "refused").rglob(".profile"))) == 1
