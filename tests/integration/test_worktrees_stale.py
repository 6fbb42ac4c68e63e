"""Worktrees that went stale are never used silently (issue 49, item 5), on real git repositories.

The repository is deleted and cloned again at the same path: the agent's worktree folder and record
are still there, but the folder's git directory is gone. `agent exec --worktree NAME` sets it aside
(renamed, nothing deleted) and makes a fresh one in the new clone, saying so; `agent worktree`
lists, refuses to remove without --force, and prunes it; a session resumed there goes to a fresh one.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from agent_cli.worktrees.entering import open_worktree, return_to
from agent_cli.worktrees.staleness import stale_reason
from agent_cli.worktrees.store import find, repository_of
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.worktree_helpers import agent_branches, committed_repo, git

CHAT = ["--provider", "openai-chat", "-m", "m"]


def clone_again(origin: Path, repo: Path) -> None:
    shutil.rmtree(repo)
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)


@pytest.fixture
def cloned(tmp_path) -> tuple[Path, Path]:
    """(origin, repo): a bare origin and a clone of it, the clone the user works in."""
    source = committed_repo(tmp_path / "source")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(origin)], check=True)
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    return origin, repo


def make_change(server, repo: Path, name: str, text: str):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": f"echo {text} > made.txt && git status --porcelain"})]),
        Reply(text="made"),
    )
    return run_agent(["exec", *CHAT, "--worktree", name, "make"], cwd=repo, env=provider_env(server, "chat"))


def test_exec_in_a_stale_worktree_makes_it_fresh_in_the_new_clone_and_keeps_the_old_folder(server, cloned):
    origin, repo = cloned
    first = make_change(server, repo, "feat1", "old")
    assert first.returncode == 0, first.stderr
    old_path = Path(first.stderr.split("kept worktree feat1 (1 uncommitted change): ")[1].split(",")[0])
    assert (old_path / "made.txt").read_text() == "old\n"

    clone_again(origin, repo)
    again = make_change(server, repo, "feat1", "new")
    assert again.returncode == 0, again.stderr
    assert "worktree feat1 was stale (its git directory" in again.stderr
    assert "is gone (the repository was deleted or cloned again)" in again.stderr
    assert f"created worktree feat1 on branch agent/feat1 at {old_path}" in again.stderr  # not "resumed"
    # the command ran in a real worktree of the new clone: git saw the change there
    assert "?? made.txt" in server.requests[-1].body["messages"][-1]["content"]
    assert git(old_path, "status", "--porcelain") == "?? made.txt"
    assert str(old_path) in git(repo, "worktree", "list")
    assert agent_branches(repo) == ["agent/feat1"]
    # the old folder was set aside, not deleted: its change is still there
    aside = [path for path in old_path.parent.iterdir() if path.name.startswith("feat1.stale-")]
    assert len(aside) == 1 and (aside[0] / "made.txt").read_text() == "old\n"
    assert f"its folder was moved to {aside[0]}" in again.stderr


def test_the_stale_folder_and_record_outlive_the_clone(server, cloned, isolated_home):
    """What the check catches: the folder and its record are still there after the clone (so,
    unchecked, "resumed worktree feat1" ran in a folder no repository knows)."""
    origin, repo = cloned
    assert make_change(server, repo, "feat1", "old").returncode == 0
    clone_again(origin, repo)
    repository = repository_of(repo)
    found = find(isolated_home, repository.main, "feat1")
    assert found is not None and found.exists
    reason = stale_reason(found, repository)
    assert reason is not None and "is gone" in reason
    assert subprocess.run(["git", "status"], cwd=found.path, capture_output=True).returncode != 0


def test_worktree_list_rm_and_prune_name_a_stale_worktree(server, cloned):
    origin, repo = cloned
    assert make_change(server, repo, "feat1", "old").returncode == 0
    clone_again(origin, repo)
    listed = run_agent(["worktree", "list"], cwd=repo)
    assert listed.returncode == 0 and "stale: repository cloned again (prune)" in listed.stdout
    refused = run_agent(["worktree", "rm", "feat1"], cwd=repo)
    assert refused.returncode == 1
    assert "worktree feat1 is stale (its git directory" in refused.stderr and "--force" in refused.stderr
    pruned = run_agent(["worktree", "prune"], cwd=repo)
    assert pruned.returncode == 0 and "forgot stale worktree feat1" in pruned.stdout
    assert "its folder is now" in pruned.stdout
    assert run_agent(["worktree", "list"], cwd=repo).stderr.startswith("no worktrees")


def test_rm_force_deletes_a_stale_worktree(server, cloned):
    origin, repo = cloned
    first = make_change(server, repo, "feat1", "old")
    old_path = Path(first.stderr.split("kept worktree feat1 (1 uncommitted change): ")[1].split(",")[0])
    clone_again(origin, repo)
    removed = run_agent(["worktree", "rm", "--force", "feat1"], cwd=repo)
    assert removed.returncode == 0, removed.stderr
    assert f"removed stale worktree feat1 ({old_path})" in removed.stdout
    assert not old_path.exists()


def test_a_git_directory_of_another_worktree_or_repository_is_stale_too(tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo")
    entered = open_worktree("feat1", None, repo, isolated_home)
    worktree = entered.worktree
    assert stale_reason(worktree, repository_of(repo)) is None
    # the new clone made a worktree of its own with the same git directory name, elsewhere
    shutil.rmtree(repo)
    committed_repo(repo)
    git(repo, "worktree", "add", "-q", str(tmp_path / "elsewhere" / "feat1"))
    reason = stale_reason(worktree, repository_of(repo))
    assert reason is not None and "belongs to another worktree of the repository" in reason
    # a folder whose .git points into another repository altogether
    other = committed_repo(tmp_path / "other")
    git(other, "worktree", "add", "-q", str(tmp_path / "other-wt"))
    (worktree.path / ".git").write_text((tmp_path / "other-wt" / ".git").read_text())
    reason = stale_reason(worktree, repository_of(repo))
    assert reason is not None and "belongs to another repository" in reason


def test_a_session_resumed_in_a_stale_worktree_goes_on_in_a_fresh_one(tmp_path, isolated_home, cloned):
    origin, repo = cloned
    entered = open_worktree("feat1", None, repo, isolated_home)
    (entered.worktree.path / "work.txt").write_text("x\n")
    recorded = entered.worktree.describe()
    clone_again(origin, repo)
    back = return_to(recorded, str(entered.cwd), isolated_home)
    assert back is not None and back.created
    assert any("was stale" in warning for warning in back.warnings)
    assert git(back.worktree.path, "status", "--porcelain") == ""  # fresh, in the new clone
