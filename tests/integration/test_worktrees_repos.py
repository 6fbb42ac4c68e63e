"""Worktrees of real repositories: with submodules, with LFS files (real git-lfs when installed,
pointer files committed as plain text otherwise), `agent worktree list|rm|prune` and their removal
rules, and the set-up of a new worktree (`[worktree] copy` and `setup`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_cli.worktrees import entering, store
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply
from tests.worktree_helpers import agent_branches, checkout_state, committed_repo, git

LFS_POINTER = (
    "version https://git-lfs.github.com/spec/v1\n"
    "oid sha256:4d7a214614ab2935c943f9e0ff69d22eadbb8f32b1258daaa5e2ca24d17e2393\n"
    "size 12345\n"
)
CHAT = ["--provider", "openai-chat", "-m", "m"]


@pytest.fixture
def local_submodules(monkeypatch):
    """Submodules cloned from a folder on this machine (git allows file URLs only when asked)."""
    monkeypatch.setenv("GIT_CONFIG_COUNT", "1")
    monkeypatch.setenv("GIT_CONFIG_KEY_0", "protocol.file.allow")
    monkeypatch.setenv("GIT_CONFIG_VALUE_0", "always")


def open_worktree(name, cwd, agent_home):
    """A worktree made here, then let go: the commands below run in other processes."""
    entered = entering.open_worktree(name, cwd=cwd, agent_home=agent_home)
    store.release(agent_home, entered.worktree)
    return entered


def test_a_worktree_of_a_repository_with_submodules(tmp_path, isolated_home, local_submodules):
    library = committed_repo(tmp_path / "library", {"lib.txt": "library code\n"})
    repo = committed_repo(tmp_path / "repo")
    git(repo, "submodule", "add", "-q", str(library), "vendor/library")
    git(repo, "commit", "-qm", "add the library")
    before = checkout_state(repo)

    entered = open_worktree("with-sub", cwd=repo, agent_home=isolated_home)
    assert entered.warnings == []
    assert (entered.worktree.path / "vendor" / "library" / "lib.txt").read_text() == "library code\n"
    assert git(entered.worktree.path, "status", "--porcelain") == ""
    assert checkout_state(repo) == before

    removed = run_agent(["worktree", "rm", "with-sub"], cwd=repo)  # git alone refuses submodules
    assert removed.returncode == 0, removed.stderr
    assert not entered.worktree.path.exists() and agent_branches(repo) == []
    assert checkout_state(repo) == before


def test_a_submodule_that_cannot_be_cloned_is_a_warning(tmp_path, isolated_home, local_submodules, monkeypatch):
    library = committed_repo(tmp_path / "library", {"lib.txt": "x\n"})
    repo = committed_repo(tmp_path / "repo")
    git(repo, "submodule", "add", "-q", str(library), "lib")
    git(repo, "commit", "-qm", "sub")
    shutil.rmtree(library)  # its origin is gone
    entered = open_worktree("orphan", cwd=repo, agent_home=isolated_home)
    assert len(entered.warnings) == 1 and "submodules could not be checked out" in entered.warnings[0]
    assert (entered.worktree.path / "README.md").is_file()


def test_lfs_pointer_files_committed_as_text(tmp_path, isolated_home, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")  # no lfs filter: the pointers are plain text
    repo = committed_repo(
        tmp_path / "repo", {".gitattributes": "*.bin filter=lfs diff=lfs merge=lfs -text\n", "model.bin": LFS_POINTER}
    )
    before = checkout_state(repo)
    entered = open_worktree("lfs-text", cwd=repo, agent_home=isolated_home)
    assert (entered.worktree.path / "model.bin").read_text() == LFS_POINTER
    assert git(entered.worktree.path, "status", "--porcelain") == ""
    assert checkout_state(repo) == before


@pytest.mark.skipif(shutil.which("git-lfs") is None, reason="git-lfs is not installed (apt-get install git-lfs)")
def test_lfs_files_are_checked_out_with_git_lfs(tmp_path, isolated_home, monkeypatch):
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")  # only the repository's own lfs set-up counts
    repo = committed_repo(tmp_path / "repo")
    git(repo, "lfs", "install", "--local")
    git(repo, "lfs", "track", "*.bin")
    (repo / "weights.bin").write_bytes(b"\x00\x01 large binary content " * 100)
    git(repo, "add", ".gitattributes", "weights.bin")
    git(repo, "commit", "-qm", "weights")
    assert "oid sha256:" in git(repo, "cat-file", "-p", "HEAD:weights.bin")  # stored as a pointer
    before = checkout_state(repo)
    entered = open_worktree("lfs-real", cwd=repo, agent_home=isolated_home)
    assert (entered.worktree.path / "weights.bin").read_bytes() == (repo / "weights.bin").read_bytes()
    assert git(entered.worktree.path, "status", "--porcelain") == ""
    assert checkout_state(repo) == before


def test_worktree_list_rm_and_prune(tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo")
    before = checkout_state(repo)
    clean = open_worktree("clean", cwd=repo, agent_home=isolated_home).worktree
    dirty = open_worktree("dirty", cwd=repo, agent_home=isolated_home).worktree
    committed = open_worktree("committed", cwd=repo, agent_home=isolated_home).worktree
    gone = open_worktree("gone", cwd=repo, agent_home=isolated_home).worktree
    (dirty.path / "README.md").write_text("changed\n")
    (committed.path / "new.txt").write_text("new\n")
    git(committed.path, "add", "new.txt")
    git(committed.path, "commit", "-qm", "new")
    shutil.rmtree(gone.path)

    listing = run_agent(["worktree", "list"], cwd=repo)
    rows = {line.split()[0]: line for line in listing.stdout.splitlines()[1:]}
    assert set(rows) == {"clean", "dirty", "committed", "gone"}
    assert "no changes" in rows["clean"] and "1 uncommitted change" in rows["dirty"]
    assert "1 commit" in rows["committed"] and "folder gone" in rows["gone"]

    refused = run_agent(["worktree", "rm", "dirty"], cwd=repo)
    assert refused.returncode == 1 and "1 uncommitted change" in refused.stderr and "--force" in refused.stderr
    assert dirty.path.is_dir()
    forced = run_agent(["worktree", "rm", "--force", "dirty"], cwd=repo)
    assert forced.returncode == 0 and not dirty.path.exists()
    kept = run_agent(["worktree", "rm", "committed"], cwd=repo)
    assert "kept branch agent/committed with its 1 commit(s)" in kept.stdout
    assert run_agent(["worktree", "rm", "clean"], cwd=repo).returncode == 0 and not clean.path.exists()
    pruned = run_agent(["worktree", "prune"], cwd=repo)
    assert "removed worktree gone" in pruned.stdout
    assert agent_branches(repo) == ["agent/committed"]
    assert "no worktrees" in run_agent(["worktree", "list"], cwd=repo).stderr
    assert checkout_state(repo) == before

    again = open_worktree("committed", cwd=repo, agent_home=isolated_home)  # back on its kept branch
    assert again.created and (again.worktree.path / "new.txt").read_text() == "new\n"
    left = entering.leave_worktree(again.worktree, agent_home=isolated_home)
    assert not left.removed and "1 commit" in left.message  # its commits are never dropped
    assert agent_branches(repo) == ["agent/committed"]


def test_a_new_worktree_gets_the_named_ignored_files_and_runs_its_setup_command(server, tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo", {".gitignore": ".env\nlocal/\n", "README.md": "hi\n"})
    (repo / ".env").write_text("SECRET=1\n")
    (repo / "local").mkdir()
    (repo / "local" / "settings.json").write_text("{}\n")
    (isolated_home / "config.toml").write_text(
        '[worktree]\ncopy = [".env", "local", "missing.txt"]\nsetup = "cat .env > setup-ran.txt"\n'
    )
    before = checkout_state(repo)
    server.script(Reply(text="ready"))
    result = run_agent(
        ["exec", *CHAT, "--json", "--worktree", "setup", "go"], cwd=repo, env=provider_env(server, "chat")
    )
    assert result.returncode == 0, result.stderr
    assert "copied into the worktree: .env, local/settings.json" in result.stderr
    assert "'missing.txt' matches nothing" in result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    path = Path(next(line for line in lines if line["type"] == "worktree.kept")["worktree"]["path"])
    assert (path / "setup-ran.txt").read_text() == "SECRET=1\n"  # ran there, with the copied file
    commands = [
        line["item"]
        for line in lines
        if line["type"] == "item.completed" and line["item"]["type"] == "command_execution"
    ]
    assert [(item["command"], item["exit_code"]) for item in commands] == [("cat .env > setup-ran.txt", 0)]
    sent = json.dumps(server.requests[0].body["messages"])  # the model knows it ran
    assert "<user_shell_command>\\n<command>cat .env > setup-ran.txt</command>" in sent
    assert not (repo / "setup-ran.txt").exists() and checkout_state(repo) == before


def test_the_repositorys_own_setup_command_waits_for_trust(server, tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo", {".agent/config.toml": '[worktree]\nsetup = "touch ran"\n'})
    server.script(Reply(text="ok"))
    result = run_agent(["exec", *CHAT, "--worktree", "t", "go"], cwd=repo, env=provider_env(server, "chat"))
    assert result.returncode == 0, result.stderr
    assert "the repository's [worktree] settings wait until it is trusted" in result.stderr
    assert "removed worktree t" in result.stderr  # nothing ran: nothing changed


def test_a_worktree_another_agent_works_in_is_never_removed(server, tmp_path, isolated_home):
    import subprocess
    import sys

    from tests.conftest import REPO

    repo = committed_repo(tmp_path / "repo")
    worktree = open_worktree("shared", cwd=repo, agent_home=isolated_home).worktree
    holder = subprocess.Popen(  # another agent, working in it
        [
            sys.executable,
            "-c",
            "import sys; from pathlib import Path; from agent_cli.worktrees.entering import open_worktree; "
            f"open_worktree('shared', cwd=Path({str(repo)!r}), agent_home=Path({str(isolated_home)!r})); "
            "print('in', flush=True); sys.stdin.read()",
        ],
        env={**__import__("os").environ, "PYTHONPATH": str(REPO)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout.readline().strip() == "in"
        refused = run_agent(["worktree", "rm", "shared"], cwd=repo)
        assert refused.returncode == 1 and "in use by another running agent" in refused.stderr
        server.script(Reply(text="looked"))
        result = run_agent(["exec", *CHAT, "--worktree", "shared", "look"], cwd=repo, env=provider_env(server, "chat"))
        assert "kept worktree shared: another running agent works in it" in result.stderr
        assert worktree.path.is_dir()
    finally:
        holder.communicate("", timeout=30)
    assert run_agent(["worktree", "rm", "shared"], cwd=repo).returncode == 0  # it has ended
    assert not worktree.path.exists()


def test_the_users_local_rules_come_along_and_the_trust_answer_with_them(tmp_path, isolated_home):
    from agent_cli.config import load_config
    from agent_cli.trust.gate import record_answer, trust_state

    local = {"permissions": {"deny": ["Read(secret.txt)"]}, "hooks": {}}
    repo = committed_repo(tmp_path / "repo", {".gitignore": ".claude/settings.local.json\n"})
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.local.json").write_text(json.dumps(local))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('[[hooks.Stop]]\ncommand = "true"\n')
    git(repo, "add", ".agent/config.toml")
    git(repo, "commit", "-qm", "hooks")
    record_answer(load_config(repo), True)
    entered = open_worktree("rules", cwd=repo, agent_home=isolated_home)
    assert entering.set_up(entered, ()) == ["copied into the worktree: .claude/settings.local.json"]
    assert json.loads((entered.worktree.path / ".claude" / "settings.local.json").read_text()) == local
    assert store.state(entered.worktree).clean  # an ignored file: no change of the worktree

    from types import SimpleNamespace

    from agent_cli.headless.worktree_cmd import inherit_trust

    config = load_config(entered.worktree.path)
    assert not trust_state(config).trusted
    inherit_trust(entered, config, SimpleNamespace(overrides=[], model=None, provider=None, mode=None))
    assert trust_state(config).trusted  # the same content as the trusted checkout
