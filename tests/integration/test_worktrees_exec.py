"""`agent exec --worktree`: the session runs in a worktree of its own, on real git repositories.

The user's checkout keeps its branch, index and status; an unchanged worktree goes with its branch
when the run ends, a changed one stays and is named (in --json too); two runs in two worktrees of
one repository at once each finish with their own results, and an undo in one restores nothing
of the other."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from tests.conftest import REPO, provider_env, run_agent
from tests.fake_server import FakeModelServer, Reply, ToolCall
from tests.worktree_helpers import agent_branches, checkout_state, committed_repo, git

CHAT = ["--provider", "openai-chat", "-m", "m"]


def test_exec_in_a_worktree_leaves_the_checkout_untouched_and_keeps_the_changed_worktree(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    (repo / "notes.txt").write_text("the user's own unstaged file\n")
    before = checkout_state(repo)
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "echo made > made.txt && git status --porcelain && pwd"})]),
        Reply(text="made it"),
    )
    result = run_agent(
        ["exec", *CHAT, "--json", "--worktree", "feat1", "make a file"], cwd=repo, env=provider_env(server, "chat")
    )
    assert result.returncode == 0, result.stderr
    assert checkout_state(repo) == before  # branch, index bytes, status, HEAD
    assert not (repo / "made.txt").exists()
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    kept = [line for line in lines if line["type"] == "worktree.kept"]
    assert len(kept) == 1 and kept[0]["worktree"]["branch"] == "agent/feat1"
    path = kept[0]["worktree"]["path"]
    assert open(os.path.join(path, "made.txt")).read() == "made\n"
    assert kept[0]["uncommitted_changes"] == 1 and kept[0]["commits"] == 0
    assert f"created worktree feat1 on branch agent/feat1 at {path}" in result.stderr
    assert f"kept worktree feat1 (1 uncommitted change): {path}, branch agent/feat1" in result.stderr
    shell_output = server.requests[1].body["messages"][-1]["content"]
    assert "?? made.txt" in shell_output and path in shell_output  # it ran there
    assert git(repo, "rev-parse", "agent/feat1") == before[3]  # a branch from HEAD

    # the same NAME resumes in it
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "cat made.txt"})]), Reply(text="still there"))
    again = run_agent(["exec", *CHAT, "--worktree", "feat1", "look"], cwd=repo, env=provider_env(server, "chat"))
    assert again.returncode == 0, again.stderr
    assert "resumed worktree feat1" in again.stderr
    assert "made" in server.requests[3].body["messages"][-1]["content"]
    assert checkout_state(repo) == before


def test_an_unchanged_worktree_is_removed_with_its_branch(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    before = checkout_state(repo)
    server.script(Reply(text="nothing to do"))
    result = run_agent(["exec", *CHAT, "--json", "--worktree", "look only"], cwd=repo, env=provider_env(server, "chat"))
    assert result.returncode == 0, result.stderr  # `--worktree "look only"`: the words are the prompt
    assert server.requests[0].body["messages"][-1]["content"] == "look only"
    removed = [json.loads(line) for line in result.stdout.splitlines() if '"worktree.removed"' in line]
    assert len(removed) == 1
    assert not os.path.exists(removed[0]["worktree"]["path"])
    assert agent_branches(repo) == [] and checkout_state(repo) == before
    assert len(git(repo, "worktree", "list").splitlines()) == 1  # git forgot it too


def test_a_committed_worktree_is_kept_and_base_picks_the_start(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    first = git(repo, "rev-parse", "HEAD")
    (repo / "second.txt").write_text("2\n")
    git(repo, "add", "second.txt")
    git(repo, "commit", "-qm", "second")
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "ls"})]), Reply(text="done"))
    result = run_agent(
        ["exec", *CHAT, "--worktree", "old", "--base", first, "list"], cwd=repo, env=provider_env(server, "chat")
    )
    assert result.returncode == 0, result.stderr
    assert "second.txt" not in server.requests[1].body["messages"][-1]["content"]  # made from --base
    assert "removed worktree old" in result.stderr  # no change: gone again


def run_exec_in_background(server: FakeModelServer, repo, name: str, prompt: str) -> subprocess.Popen:
    env = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}
    env.update(provider_env(server, "chat"), PYTHONPATH=str(REPO), NO_COLOR="1")
    return subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "exec", *CHAT, "--json", "--worktree", name, prompt],
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_two_runs_in_two_worktrees_at_once_and_undo_in_one_leaves_the_other(tmp_path):
    repo = committed_repo(tmp_path / "repo")
    before = checkout_state(repo)
    meet = tmp_path / "meet"  # each command waits there for the other: the two runs overlap
    meet.mkdir()
    with FakeModelServer() as one, FakeModelServer() as two:
        for server, name, other in ((one, "a", "b"), (two, "b", "a")):
            wait = f"touch {meet}/{name}; for i in $(seq 900); do [ -f {meet}/{other} ] && break; sleep 0.1; done"
            command = (
                f"{wait}; [ -f {meet}/{other} ] && echo met-{other}; echo {name} > {name}.txt; echo hi >> README.md"
            )
            server.script(Reply(tool_calls=[ToolCall("shell", {"command": command})]), Reply(text=f"answer of {name}"))
        runs = [run_exec_in_background(one, repo, "a", "make a"), run_exec_in_background(two, repo, "b", "make b")]
        outputs = [run.communicate(timeout=180) for run in runs]
    results = {}
    for name, run, (stdout, stderr) in zip("ab", runs, outputs):
        assert run.returncode == 0, stderr
        lines = [json.loads(line) for line in stdout.splitlines()]
        answers = [line["item"]["text"] for line in lines if line.get("item", {}).get("type") == "agent_message"]
        assert answers == [f"answer of {name}"]
        shell = next(line["item"] for line in lines if line["type"] == "item.completed" and "command" in line["item"])
        assert f"met-{'b' if name == 'a' else 'a'}" in shell["aggregated_output"]  # they ran at the same time
        results[name] = {
            "thread": lines[0]["thread_id"],
            "path": next(line for line in lines if line["type"] == "worktree.kept")["worktree"]["path"],
        }
    assert results["a"]["thread"] != results["b"]["thread"]
    refs = git(repo, "for-each-ref", "--format=%(refname)", "refs/agent/checkpoints/").splitlines()
    assert {ref.split("/")[3] for ref in refs} == {results["a"]["thread"], results["b"]["thread"]}  # each its own
    a, b = results["a"]["path"], results["b"]["path"]
    assert sorted(os.listdir(a)) == [".git", "README.md", "a.txt"]
    assert sorted(os.listdir(b)) == [".git", "README.md", "b.txt"]
    assert checkout_state(repo) == before

    undone = run_agent(["exec", "undo", "--last"], cwd=tmp_path / a)
    assert undone.returncode == 0, undone.stderr
    assert sorted(os.listdir(a)) == [".git", "README.md"]
    assert open(os.path.join(a, "README.md")).read() == "hello\n"
    assert sorted(os.listdir(b)) == [".git", "README.md", "b.txt"]  # the other worktree is as it was
    assert open(os.path.join(b, "README.md")).read() == "hello\nhi\n"
    assert checkout_state(repo) == before


def test_a_usage_error_after_the_worktree_was_made_leaves_none_behind(server, tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo")
    result = run_agent(
        ["exec", *CHAT, "--worktree", "w", "--output-schema", "missing.json", "go"],
        cwd=repo,
        env=provider_env(server, "chat"),
    )
    assert result.returncode == 2 and "--output-schema missing.json" in result.stderr
    assert "created worktree w" in result.stderr
    assert agent_branches(repo) == [] and not list((isolated_home / "worktrees").glob("*/w"))


def test_the_checkouts_trust_answer_carries_over_to_its_worktree(server, tmp_path, isolated_home):
    from agent_cli.config import load_config
    from agent_cli.trust.gate import record_answer

    repo = committed_repo(tmp_path / "repo", {".agent/config.toml": '[[hooks.Stop]]\ncommand = "true"\n'})
    server.script(Reply(text="one"), Reply(text="two"))
    untrusted = run_agent(["exec", *CHAT, "--worktree", "a", "go"], cwd=repo, env=provider_env(server, "chat"))
    assert untrusted.returncode == 0, untrusted.stderr
    assert "this folder is not trusted" in untrusted.stderr

    record_answer(load_config(repo), True)  # as the TUI's question does
    trusted = run_agent(["exec", *CHAT, "--worktree", "b", "go"], cwd=repo, env=provider_env(server, "chat"))
    assert trusted.returncode == 0, trusted.stderr
    assert "not trusted" not in trusted.stderr
