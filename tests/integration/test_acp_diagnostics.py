"""`agent acp`: a language server's new problems travel with the edit's tool call update, and a
test_command's run is told as a thought (ruff's server, from the `test` extra)."""

from __future__ import annotations

import shutil

import pytest
from acp import text_block

from tests.conftest import git_init
from tests.fake_server import Reply, ToolCall
from tests.integration.test_acp import RecordingClient, agent_env, spawn, started

pytestmark = pytest.mark.timeout(120)


@pytest.mark.skipif(shutil.which("ruff") is None, reason="ruff is not installed (the `test` extra installs it)")
async def test_diagnostics_come_with_the_edit_and_the_check_as_a_thought(server, tmp_path):
    root = git_init(tmp_path / "repo")
    (root / "a.py").write_text("x = 1\n")
    patch = "*** Begin Patch\n*** Update File: a.py\n@@\n x = 1\n+print(nowhere_defined)\n*** End Patch\n"
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]), Reply(text="Edited."))
    client = RecordingClient()
    flags = ["-a", "never", "-c", "lsp.ruff.disabled=false", "-c", "lsp_wait_ms=60000", "-c", "test_command='exit 0'"]
    async with spawn(client, server, root, *flags, env=agent_env(server)) as (conn, _):
        session_id = await started(conn, root)
        await conn.prompt(session_id=session_id, prompt=[text_block("edit")])
    update = client.of("tool_call_update")[-1]
    assert update.content[0].type == "diff"
    texts = [block.content.text for block in update.content[1:] if block.type == "content"]
    assert any("a.py:2:7: error: Undefined name `nowhere_defined` [F821]" in text for text in texts), texts
    assert "test: `exit 0` passed" in client.text("agent_thought_chunk")
