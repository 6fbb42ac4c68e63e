"""The git queries behind /diff and /review, against real repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_cli.commands import git
from agent_cli.commands.errors import InputError
from agent_cli.commands.review import cap_diff, parse_review_args
from tests.conftest import git_init


def run_git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.email=t@example.com", "-c", "user.name=T", *args], cwd=repo, check=True, capture_output=True
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    git_init(tmp_path)
    return tmp_path


async def test_a_repository_without_commits_diffs_against_the_empty_tree(repo):
    (repo / "staged.py").write_text("STAGED = 1\n")
    run_git(repo, "add", "staged.py")
    (repo / "loose.py").write_text("LOOSE = 1\n")
    diff = await git.uncommitted_diff(repo)
    assert "+STAGED = 1" in diff and "+LOOSE = 1" in diff


async def test_ignored_files_are_left_out_and_large_untracked_files_are_only_named(repo):
    (repo / ".gitignore").write_text("build/\n")
    (repo / "build").mkdir()
    (repo / "build" / "out.txt").write_text("IGNORED\n")
    (repo / "data.csv").write_text("x\n" * (git.MAX_UNTRACKED_BYTES // 2 + 10))
    diff = await git.uncommitted_diff(repo)
    assert "IGNORED" not in diff
    assert "new untracked file" in diff and "data.csv" in diff and "+x\n" not in diff


async def test_outside_a_repository_is_an_error(tmp_path):
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(InputError, match="not inside a git repository"):
        await git.uncommitted_diff(plain)


def test_a_long_diff_is_cut_and_lists_every_file():
    diff = "".join(f"diff --git a/f{n}.py b/f{n}.py\n+{'x' * 100}\n" for n in range(50))
    capped = cap_diff(diff, 1000)
    assert len(capped.encode()) < 1000 + 600
    assert "diff truncated" in capped and "f49.py" in capped.splitlines()[-1]
    assert cap_diff("small\n", 1000) == "small\n"


@pytest.mark.parametrize(
    "args, target, value, rest",
    [
        ("", None, None, ""),
        ("--uncommitted", "uncommitted", None, ""),
        ("--uncommitted look at errors", "uncommitted", None, "look at errors"),
        ("--base main @a.py be strict", "base", "main", "@a.py be strict"),
        ("@a.py --commit abc123", "commit", "abc123", "@a.py"),
        ("is the cache safe?", None, None, "is the cache safe?"),
    ],
)
def test_review_arguments(args, target, value, rest):
    parsed = parse_review_args(args)
    assert (parsed.target, parsed.value, parsed.rest) == (target, value, rest)
