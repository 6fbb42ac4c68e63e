"""Checkpoints end to end: turns that change files through apply_patch and shell, taken back with
/undo on a real git repository and on a plain directory, the user's git state untouched."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.checkpoints.store import locate
from agent_cli.store.rollout import load_session_file
from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

SETTINGS = ('approval_policy="never"', 'sandbox_mode="danger-full-access"', "checkpoint_max_file_bytes=1000")
PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-one\n+ONE\n two\n*** Add File: sub/new.txt\n+hello\n*** End Patch"
)
SHELL = (
    "sed -i s/two/TWO/ a.txt && rm keep.txt && mv b.txt c.txt && echo made > made.txt"
    " && chmod -x run.sh && chmod 644 private.txt && echo changed > logs/ignored.log"
    " && head -c 2000 /dev/zero > big.bin"
)


def tree(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under ``root`` but .git: content and permission bits."""
    found = {}
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d != ".git"]
        for name in files:
            path = Path(directory, name)
            found[str(path.relative_to(root))] = (path.read_bytes(), stat.S_IMODE(path.lstat().st_mode))
    return found


def git(repo: Path, *args: str) -> bytes:
    return subprocess.run(["git", "-C", str(repo), *args], check=True, capture_output=True).stdout


def users_git_state(repo: Path) -> dict[str, bytes]:
    """The index, HEAD, branches, tags and stash, byte for byte."""
    state = {name: (repo / ".git" / name).read_bytes() for name in ("index", "HEAD")}
    for ref_dir in ("refs/heads", "refs/tags", "refs/stash", "logs/refs/stash", "logs/HEAD", "packed-refs"):
        path = repo / ".git" / ref_dir
        if path.is_file():
            state[ref_dir] = path.read_bytes()
        elif path.is_dir():
            state.update({str(p): p.read_bytes() for p in sorted(path.rglob("*")) if p.is_file()})
    state["refs"] = git(
        repo, "for-each-ref", "--format=%(refname) %(objectname)", "refs/heads", "refs/tags", "refs/stash"
    )
    status = git(repo, "--no-optional-locks", "status", "--porcelain=v1", "-z", "--untracked-files=all")
    state["status"] = b"\0".join(entry for entry in status.split(b"\0") if not entry.endswith(b"big.bin"))
    return state


def make_tree(root: Path, kind: str) -> Path:
    if kind == "git":
        git_init(root)
    else:
        root.mkdir(parents=True)
    (root / ".gitignore").write_text("logs/\n")
    (root / "a.txt").write_text("one\ntwo\n")
    (root / "b.txt").write_text("bee\n")
    (root / "keep.txt").write_text("keep me\n")
    (root / "run.sh").write_text("#!/bin/sh\necho hi\n")
    (root / "run.sh").chmod(0o755)
    (root / "private.txt").write_text("secret\n")
    (root / "private.txt").chmod(0o600)
    (root / "logs").mkdir()
    (root / "logs" / "ignored.log").write_text("log\n")
    (root / "big.bin").write_bytes(b"x" * 5000)  # over the limit: never in a snapshot
    if kind == "git":
        git(root, "add", "-A")
        git(root, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "initial")
        git(root, "branch", "feature")
        (root / "b.txt").write_text("stashed change\n")
        git(root, "-c", "user.name=t", "-c", "user.email=t@t", "stash", "-q")
        (root / "b.txt").write_text("bee, staged\n")
        git(root, "add", "b.txt")  # the user's index differs from HEAD and from the tree
        (root / "b.txt").write_text("bee\n")
    return root


def restored(events) -> ev.Rewound:
    return next(event for event in events if isinstance(event, ev.Rewound))


@pytest.mark.parametrize("kind", ["git", "plain"])
async def test_undo_takes_back_patch_and_shell_turns_exactly(server, tmp_path, monkeypatch, kind):
    root = make_tree(tmp_path / "work", kind)
    git_before = users_git_state(root) if kind == "git" else None
    start = tree(root)
    server.script(
        Reply(tool_calls=[ToolCall("apply_patch", {"patch": PATCH})]),
        Reply(text="patched"),
        Reply(tool_calls=[ToolCall("shell", {"command": SHELL})]),
        Reply(text="shelled"),
    )
    session = make_session(server, root, monkeypatch, *SETTINGS)
    first = await collect_events(session, "edit a.txt")
    assert [type(e) for e in first].count(ev.CheckpointCreated) == 1
    after_first = tree(root)
    assert after_first["sub/new.txt"][0] == b"hello\n"
    second = await collect_events(session, "shell things")
    created = next(e for e in second if isinstance(e, ev.CheckpointCreated))
    assert created.skipped == ("big.bin",)
    assert any(isinstance(e, ev.Warning) and "big.bin" in e.message for e in second)
    assert tree(root)["big.bin"][0] == b"\0" * 2000

    undo = await collect_events(session, "/undo --yes")
    result = restored(undo)
    assert set(result.restored) == {"a.txt", "keep.txt", "b.txt", "c.txt", "made.txt", "run.sh", "private.txt"}
    now = tree(root)
    # The ignored and the oversized file keep what the turn wrote; everything else is as before.
    assert now.pop("logs/ignored.log")[0] == b"changed\n"
    assert now.pop("big.bin")[0] == b"\0" * 2000
    expected = {k: v for k, v in after_first.items() if k not in ("logs/ignored.log", "big.bin")}
    assert now == expected

    result = restored(await collect_events(session, "/undo --yes"))
    assert set(result.restored) == {"a.txt", "sub/new.txt"}
    now = tree(root)
    assert not (root / "sub").exists()  # the directory the turn made for its file is gone too
    for name in ("logs/ignored.log", "big.bin"):
        now.pop(name), start.pop(name)
    assert now == start
    if kind == "git":
        assert users_git_state(root) == git_before
        assert git(root, "for-each-ref", "refs/agent/") == b""  # the user's repository holds none of it
        store = f"--git-dir={locate(root, session.config.agent_home).git_dir}"
        refs = git(root, store, "for-each-ref", "--format=%(refname)", "refs/agent/").decode().split()
        assert len(refs) == 4 and all(ref.startswith(f"refs/agent/checkpoints/{session.id}/") for ref in refs)
    nothing = await collect_events(session, "/undo")
    assert "nothing to undo" in next(e for e in nothing if isinstance(e, ev.Notice)).text
    await session.aclose()
    lines = load_session_file(session.rollout.path).checkpoints
    assert [line["type"] for line in lines] == ["checkpoint", "checkpoint_after"] * 2 + ["checkpoint_undone"] * 2
    # The model never sees a checkpoint: no request carried a commit id.
    commits = [line["before"] for line in lines if "before" in line]
    assert len(commits) == 2
    assert not any(commit in request.raw.decode() for commit in commits for request in server.requests)


@pytest.mark.parametrize("kind", ["git", "plain"])
async def test_a_hand_edit_after_the_turn_is_reported_not_overwritten(server, tmp_path, monkeypatch, kind):
    root = make_tree(tmp_path / "work", kind)
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "echo agent > a.txt; echo agent > b.txt"})]), Reply(text="done")
    )
    session = make_session(server, root, monkeypatch, *SETTINGS)
    await collect_events(session, "change two files")
    await session.checkpoints._settle()  # the turn's closing snapshot, which tells hand edits apart
    (root / "a.txt").write_text("by hand\n")
    result = restored(await collect_events(session, "/undo --yes"))
    assert result.restored == ("b.txt",) and result.conflicts == ("a.txt",)
    assert (root / "a.txt").read_text() == "by hand\n" and (root / "b.txt").read_text() == "bee\n"
    # The model is told which files went back (its memory of them is stale).
    server.script(Reply(text="ok"))
    await collect_events(session, "next")
    assert "<files_restored>" in server.requests[-1].raw.decode()
    await session.aclose()


async def test_read_only_turns_and_read_only_sandbox_take_no_checkpoint(server, tmp_path, monkeypatch):
    root = make_tree(tmp_path / "work", "git")
    server.script(
        Reply(tool_calls=[ToolCall("read_file", {"path": "a.txt"})]),
        Reply(text="read"),
        Reply(tool_calls=[ToolCall("shell", {"command": "cat a.txt"})]),
        Reply(text="shown"),
    )
    session = make_session(server, root, monkeypatch, 'approval_policy="never"', 'sandbox_mode="read-only"')
    events = await collect_events(session, "read") + await collect_events(session, "cat")
    assert not any(isinstance(e, ev.CheckpointCreated) for e in events)
    assert git(root, "for-each-ref", "refs/agent/") == b""
    await session.aclose()


async def test_undo_asks_first_and_a_no_restores_nothing(server, tmp_path, monkeypatch):
    root = make_tree(tmp_path / "work", "git")
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo agent > a.txt"})]), Reply(text="done"))
    session = make_session(server, root, monkeypatch, *SETTINGS, interactive=True)
    await collect_events(session, "change", answer="approve")
    events = await collect_events(session, "/undo", answer="deny")
    shown = "\n".join(e.text for e in events if isinstance(e, ev.Notice))
    assert "-one\n-two\n+agent" in shown  # the diff that would be taken back
    assert any(isinstance(e, ev.ApprovalRequest) for e in events)
    assert (root / "a.txt").read_text() == "agent\n"
    events = await collect_events(session, "/undo", answer="approve")
    assert restored(events).restored == ("a.txt",) and (root / "a.txt").read_text() == "one\ntwo\n"
    await session.aclose()


async def test_checkpoints_are_not_reachable_from_the_users_repository(server, tmp_path, monkeypatch):
    """Issue 33, item 8: an untracked .env.local a checkpoint keeps must not travel with the user's
    repository (refs, objects, a mirror clone); /undo still brings it back."""
    root = make_tree(tmp_path / "work", "git")
    (root / ".env.local").write_text("API_TOKEN=very-secret\n")
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "rm .env.local; echo agent > a.txt"})]), Reply(text="ok")
    )
    session = make_session(server, root, monkeypatch, *SETTINGS)
    await collect_events(session, "change")
    await session.checkpoints._settle()
    secret = subprocess.run(["git", "hash-object", "--stdin"], input=b"API_TOKEN=very-secret\n", capture_output=True)
    blob = secret.stdout.decode().strip()
    assert git(root, "for-each-ref", "refs/agent/") == b""
    missing = subprocess.run(["git", "-C", str(root), "cat-file", "-e", blob], capture_output=True)
    assert missing.returncode != 0  # not even a loose object in the user's store
    git(tmp_path, "clone", "-q", "--mirror", str(root), "mirror.git")
    assert subprocess.run(["git", "-C", str(tmp_path / "mirror.git"), "cat-file", "-e", blob]).returncode != 0
    result = restored(await collect_events(session, "/undo --yes"))
    assert set(result.restored) == {".env.local", "a.txt"}
    assert (root / ".env.local").read_text() == "API_TOKEN=very-secret\n"
    await session.aclose()
