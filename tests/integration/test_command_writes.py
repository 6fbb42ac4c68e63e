"""Slash commands that write files ask like tools do (issue 45): `/export FILE`, `/init`'s
AGENTS.md and `/worktree NAME` go through the permission decision a model's patch of the same files
gets (rules, approval policy, the sandbox's writable roots, the question), in every front end: the
session as `agent exec` runs it, the Claude Agent SDK's `can_use_tool`, ACP's permission request
(the TUI's dialog: tests/tui/test_export_tui.py, test_worktree_tui.py)."""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli import events as ev
from tests.fake_server import Reply
from tests.session_helpers import collect_events, make_session
from tests.worktree_helpers import agent_branches, committed_repo

EXEC_LIKE = ('approval_policy="never"', 'sandbox_mode="workspace-write"')


@pytest.fixture
def outside() -> Iterator[Path]:
    """A folder outside every writable root of the sandbox (/tmp is one; /var/tmp is not)."""
    folder = Path(tempfile.mkdtemp(prefix="agent-outside-", dir="/var/tmp"))
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return committed_repo(tmp_path / "repo")


def rejected(events: list) -> str:
    return " ".join(e.message for e in events if isinstance(e, (ev.InputRejected, ev.Error)))


async def talked(server, session) -> None:
    server.script(Reply(text="an answer"))
    await collect_events(session, "a question")


# --- as agent exec runs them (policy never: what it would have to ask is refused) -----------------


async def test_export_outside_the_sandbox_or_through_a_link_out_is_refused(server, repo, outside, monkeypatch):
    session = make_session(server, repo, monkeypatch, *EXEC_LIKE)
    await talked(server, session)
    events = await collect_events(session, f"/export {outside / 'new.md'}")
    assert not (outside / "new.md").exists() and "outside the sandbox" in rejected(events)
    (outside / "precious.md").write_text("mine\n")
    (repo / "link.md").symlink_to(outside / "precious.md")
    events = await collect_events(session, "/export link.md")
    assert (outside / "precious.md").read_text() == "mine\n" and "outside the sandbox" in rejected(events)
    await collect_events(session, "/export inside.md")  # the control: inside the working folder it writes
    assert (repo / "inside.md").read_text().startswith("# Conversation")
    await session.aclose()


async def test_an_edit_deny_rule_holds_for_a_command_too(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch, *EXEC_LIKE, 'permissions.deny=["Edit(AGENTS.md)"]')
    server.script(Reply(text="# Working here\n"))
    events = await collect_events(session, "/init")
    assert not (repo / "AGENTS.md").exists() and "Edit(AGENTS.md)" in rejected(events)
    await session.aclose()


async def test_a_new_worktree_is_a_write_to_git_that_exec_cannot_approve(server, repo, monkeypatch, isolated_home):
    session = make_session(server, repo, monkeypatch, *EXEC_LIKE)
    events = await collect_events(session, "/worktree wt1")
    assert "protected" in rejected(events)
    assert agent_branches(repo) == [] and not (isolated_home / "worktrees").exists()
    await session.aclose()


# --- over the Claude Agent SDK: can_use_tool denies everything ----------------------------------


def test_the_sdk_host_is_asked_for_every_write_a_command_makes(server, repo, outside, tmp_path, agent_binary_path):
    pytest.importorskip("claude_agent_sdk", reason="the Claude Agent SDK is not installed (the test extra has it)")
    from claude_agent_sdk import ClaudeSDKClient, PermissionResultDeny

    from tests.integration.test_claude_agent_sdk import collect, options

    (outside / "precious.md").write_text("mine\n")
    (repo / "link.md").symlink_to(outside / "precious.md")
    server.script(Reply(text="an answer"), Reply(text="# Working here\n"))
    asked: list[tuple[str, str]] = []

    async def can_use_tool(name, tool_input, context):
        asked.append((name, str(tool_input.get("patch", ""))))
        return PermissionResultDeny(message="no writes")

    async def run():
        opts = options(server, "responses", agent_binary_path, repo, can_use_tool=can_use_tool)
        results = []
        async with ClaudeSDKClient(opts) as client:
            for text in ("a question", f"/export {outside / 'new.md'}", "/export link.md", "/init", "/worktree wt1"):
                await client.query(text)
                results.append((await collect(client))[-1])
        return results

    results = asyncio.run(run())
    assert [name for name, _ in asked] == ["apply_patch"] * 4
    assert str(outside / "new.md") in asked[0][1] and str(outside / "precious.md") in asked[1][1]
    assert "AGENTS.md" in asked[2][1] and "git worktree add -b agent/wt1" in asked[3][1]
    assert all(result.is_error and "no writes" in (result.result or "") for result in results[1:])
    assert not (outside / "new.md").exists() and (outside / "precious.md").read_text() == "mine\n"
    assert not (repo / "AGENTS.md").exists() and agent_branches(repo) == []


@pytest.fixture
def agent_binary_path(tmp_path) -> Path:
    import sys

    path = tmp_path / "bin" / "agent"
    path.parent.mkdir()
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m agent_cli "$@"\n')
    path.chmod(0o755)
    return path


# --- over ACP: the editor's permission request -------------------------------------------------


async def test_an_acp_editor_is_asked_before_export_writes_outside(server, repo, outside):
    from acp import text_block

    from tests.integration.test_acp import RecordingClient, spawn, started

    server.script(Reply(text="an answer"))
    client = RecordingClient("reject_once")
    async with spawn(client, server, repo) as (conn, _):
        session_id = await started(conn, repo)
        await conn.prompt(session_id=session_id, prompt=[text_block("a question")])
        await conn.prompt(session_id=session_id, prompt=[text_block(f"/export {outside / 'new.md'}")])
    assert len(client.permission_requests) == 1 and not (outside / "new.md").exists()
