"""`agent acp`: `session/new` with `_meta.worktree` starts the editor's session in a worktree; its
set-up command runs before the first prompt; when the agent closes, an unchanged worktree goes."""

from __future__ import annotations

import json

import pytest
from acp import RequestError, text_block

from tests.fake_server import Reply, ToolCall
from tests.integration.test_acp import RecordingClient, spawn, started
from tests.worktree_helpers import agent_branches, checkout_state, committed_repo

pytestmark = pytest.mark.timeout(90)


async def test_session_new_with_a_worktree(server, tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo")
    before = checkout_state(repo)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "pwd; cat s.txt"})]), Reply(text="done"))
    client = RecordingClient("allow_once")
    async with spawn(client, server, repo, "-c", 'worktree.setup="echo s > s.txt"') as (conn, _):
        await started(conn, repo)
        session = await conn.new_session(cwd=str(repo), mcp_servers=[], worktree="ed")
        other = await conn.new_session(cwd=str(repo), mcp_servers=[], worktree=True)  # never prompted
        with pytest.raises(RequestError):
            await conn.new_session(cwd=str(repo), mcp_servers=[], worktree="bad name")
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("where?")])
        assert reply.stop_reason == "end_turn"
        assert other.session_id != session.session_id
    folder = isolated_home / "worktrees"
    ed = next(folder.glob("repo-*/ed"))
    first, second = (json.dumps(request.body) for request in server.requests)
    assert "<command>echo s > s.txt</command>" in first  # the set-up ran first, as a !command
    assert str(ed) in second  # the model's command ran in the worktree
    assert (ed / "s.txt").read_text() == "s\n"
    assert agent_branches(repo) == ["agent/ed"]  # the changed one is kept, the unused one removed
    assert checkout_state(repo) == before


async def test_session_load_goes_back_into_its_worktree(server, tmp_path, isolated_home):
    from acp import PROTOCOL_VERSION

    repo = committed_repo(tmp_path / "repo")
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch here"})]),
        Reply(text="made"),
        Reply(tool_calls=[ToolCall("shell", {"command": "pwd"})]),
        Reply(text="back"),
    )
    async with spawn(RecordingClient("allow_once"), server, repo) as (conn, _):
        await started(conn, repo)
        session = await conn.new_session(cwd=str(repo), mcp_servers=[], worktree="again")
        await conn.prompt(session_id=session.session_id, prompt=[text_block("make")])
    folder = next((isolated_home / "worktrees").glob("repo-*/again"))
    async with spawn(RecordingClient("allow_once"), server, repo) as (conn, _):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        await conn.load_session(cwd=str(repo), session_id=session.session_id, mcp_servers=[])
        await conn.prompt(session_id=session.session_id, prompt=[text_block("where now?")])
    assert str(folder) in json.dumps(server.requests[-1].body)
    assert (folder / "here").exists() and not (repo / "here").exists()
