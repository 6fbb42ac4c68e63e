"""The snapshot engine on real repositories: what it keeps, what it never touches, time limits."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from agent_cli.checkpoints.gitcmd import CheckpointError
from agent_cli.checkpoints.ledger import Checkpoint, Ledger
from agent_cli.checkpoints.restore import apply_restore, plan_restore
from agent_cli.checkpoints.snapshot import read_snapshot, take_snapshot
from agent_cli.checkpoints.store import Store, locate
from tests.conftest import git_init


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", *args],
        check=True,
        capture_output=True,
        text=True,
    ).stdout


def test_a_snapshot_in_a_repository_with_a_conflict_and_a_staged_file_leaves_the_index_alone(tmp_path):
    repo = git_init(tmp_path / "repo")
    (repo / "a.txt").write_text("base\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "base")
    git(repo, "checkout", "-qb", "other")
    (repo / "a.txt").write_text("other\n")
    git(repo, "commit", "-qam", "other")
    git(repo, "checkout", "-q", "-")
    (repo / "a.txt").write_text("mine\n")
    git(repo, "commit", "-qam", "mine")
    subprocess.run(
        ["git", "-C", str(repo), "-c", "user.name=t", "-c", "user.email=t@t", "merge", "-q", "other"],
        capture_output=True,
    )  # a conflict
    (repo / "staged.txt").write_text("staged\n")
    git(repo, "add", "staged.txt")
    index, head = (repo / ".git" / "index").read_bytes(), (repo / ".git" / "HEAD").read_bytes()
    merge_head = (repo / ".git" / "MERGE_HEAD").read_bytes()
    store = locate(repo, tmp_path / "home")
    snapshot, _ = take_snapshot(store, tmp_path / "home" / "i.index", "s/1")
    assert (repo / ".git" / "index").read_bytes() == index and (repo / ".git" / "HEAD").read_bytes() == head
    assert (repo / ".git" / "MERGE_HEAD").read_bytes() == merge_head
    shadow = f"--git-dir={store.git_dir}"
    listed = git(repo, shadow, "ls-tree", "-r", "--name-only", snapshot.commit).split()
    assert listed == ["a.txt", "staged.txt"]
    assert "<<<<<<<" in git(repo, shadow, "show", f"{snapshot.commit}:a.txt")  # the file as it is on disk
    assert "refs/agent/checkpoints/s/1" in git(repo, shadow, "for-each-ref")
    assert git(repo, "stash", "list") == "" and "refs/agent" not in git(repo, "for-each-ref")


def test_names_with_spaces_newlines_and_glob_characters_round_trip(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    names = ["with space.txt", "star*.txt", "new\nline.txt", "ünïcode.txt", ":(top)magic.txt"]
    for name in names:
        (root / name).write_text(name)
    store = locate(root, tmp_path / "home")
    before, _ = take_snapshot(store, tmp_path / "home" / "i.index", "s/1")
    for name in names:
        (root / name).write_text("changed")
    (root / "link").symlink_to("with space.txt")
    plan = plan_restore(store, before, None, tmp_path / "home" / "scratch.index")
    assert sorted(plan.paths) == sorted([*names, "link"])
    apply_restore(plan)
    assert {name: (root / name).read_text() for name in names} == {name: name for name in names}
    assert not (root / "link").exists()


def test_symlinks_and_exact_modes_are_restored(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "target").write_text("t")
    (root / "link").symlink_to("target")
    (root / "odd").write_text("o")
    os.chmod(root / "odd", 0o640)
    store = locate(root, tmp_path / "home")
    before, _ = take_snapshot(store, tmp_path / "home" / "i.index", "s/1")
    assert read_snapshot(store, before.commit).modes == {"odd": 0o640}
    (root / "link").unlink()
    (root / "link").write_text("now a file")
    os.chmod(root / "odd", 0o600)
    apply_restore(plan_restore(store, before, None, tmp_path / "home" / "scratch.index"))
    assert os.readlink(root / "link") == "target"
    assert (root / "odd").stat().st_mode & 0o777 == 0o640


def test_a_time_limit_that_runs_out_is_an_error_saying_so(tmp_path):
    root = tmp_path / "plain"
    root.mkdir()
    (root / "a").write_text("a")
    with pytest.raises(CheckpointError) as raised:
        take_snapshot(locate(root, tmp_path / "home"), tmp_path / "home" / "i.index", "s/1", time_limit=0.000001)
    assert raised.value.too_slow


def test_the_home_directory_outside_git_is_never_snapshotted(tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path))
    with pytest.raises(CheckpointError) as raised:
        locate(tmp_path, tmp_path / ".agent")
    assert raised.value.refused


def test_the_ledger_replays_undo_and_rewind_lines():
    ledger = Ledger()
    for number, index in ((1, 5), (2, 9), (3, 14)):
        ledger.replay(
            {
                "type": "checkpoint",
                **Checkpoint(str(number), number, 0, index, f"p{number}", "git", "/g", "/w", "c" * 40).record(),
            }
        )
    ledger.replay({"type": "checkpoint_undone", "ids": ["3"]})
    assert [c.id for c in ledger.last()] == ["2"]
    ledger.replay({"type": "rewind", "length": 9, "epoch": 0})
    assert [c.id for c in ledger.active()] == ["1"]
    assert [c.id for c in ledger.since_prompt(0, 0)] == ["1"]
    assert ledger.since_prompt(0, 1) == []  # after a compaction, older prompt indexes mean nothing


def test_a_restore_never_writes_or_removes_through_a_symlinked_folder_planted_after_the_turn(tmp_path):
    """A turn deletes tools/pre-commit; later (a background command) tools becomes a link to
    .git/hooks. Restoring must not write the script into .git/hooks, where git would run it."""
    root = git_init(tmp_path / "repo")
    (root / "tools").mkdir()
    (root / "tools" / "pre-commit").write_text("#!/bin/sh\necho ran\n")
    os.chmod(root / "tools" / "pre-commit", 0o755)
    (root / "gen").mkdir()
    store = locate(root, tmp_path / "home")
    before, _ = take_snapshot(store, tmp_path / "home" / "i.index", "s/1")
    (root / "tools" / "pre-commit").unlink()
    (root / "gen" / "made.txt").write_text("made by the turn\n")
    after, _ = take_snapshot(store, tmp_path / "home" / "i.index", "s/2")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "made.txt").write_text("the user's own\n")
    (root / "tools").rmdir()
    (root / "tools").symlink_to(".git/hooks")
    for name in ("made.txt",):
        (root / "gen" / name).unlink()
    (root / "gen").rmdir()
    (root / "gen").symlink_to(outside)
    plan = plan_restore(store, before, read_snapshot(store, after.commit), tmp_path / "home" / "scratch.index")
    with pytest.raises(CheckpointError, match="symbolic link"):
        apply_restore(plan)
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    assert (outside / "made.txt").read_text() == "the user's own\n"


def test_a_sha256_repository_gets_a_store_of_the_same_format(tmp_path):
    repo = tmp_path / "repo"
    made = subprocess.run(["git", "init", "-q", "--object-format=sha256", str(repo)], capture_output=True)
    if made.returncode != 0:
        pytest.skip("this git cannot make SHA-256 repositories")
    (repo / "a.txt").write_text("one\n")
    git(repo, "add", "a.txt")
    git(repo, "commit", "-qm", "one")
    store = locate(repo, tmp_path / "home")
    snapshot, _ = take_snapshot(store, tmp_path / "home" / "i.index", "s/1")
    assert len(snapshot.commit) == 64
    (repo / "a.txt").write_text("two\n")
    plan = plan_restore(store, read_snapshot(store, snapshot.commit), None, tmp_path / "home" / "scratch.index")
    assert apply_restore(plan) == ["a.txt"] and (repo / "a.txt").read_text() == "one\n"


def test_checkpoints_an_earlier_version_kept_in_the_repository_still_restore(tmp_path):
    repo = git_init(tmp_path / "repo")
    (repo / "a.txt").write_text("one\n")
    old = Store("git", repo / ".git", repo, repo / ".git")  # refs/agent/ in the user's repository
    snapshot, _ = take_snapshot(old, tmp_path / "i.index", "s/1")
    (repo / "a.txt").write_text("two\n")
    record = Checkpoint("1", 1, 0, 0, "p", "git", str(repo / ".git"), str(repo), snapshot.commit).record()
    ledger = Ledger()
    ledger.replay({"type": "checkpoint", **record})
    store = ledger.checkpoints[0].location()
    plan = plan_restore(store, read_snapshot(store, snapshot.commit), None, tmp_path / "scratch.index")
    assert apply_restore(plan) == ["a.txt"] and (repo / "a.txt").read_text() == "one\n"
