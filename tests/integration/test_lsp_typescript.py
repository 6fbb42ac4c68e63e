"""TypeScript's language server (typescript-language-server with TypeScript, installed in
tests/node by `.ci/run`) in a real session, in the sandbox: an edit's new error reaches the next
request, an old one does not, and the `lsp` tool goes to a definition in another file."""

from __future__ import annotations

import shutil

import pytest

from tests.conftest import REPO, git_init
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

SERVER = REPO / "tests" / "node" / "node_modules" / ".bin" / "typescript-language-server"
pytestmark = [
    pytest.mark.skipif(shutil.which("node") is None, reason="Node.js is not installed"),
    pytest.mark.skipif(
        not SERVER.exists(), reason="typescript-language-server is not installed: npm install --prefix tests/node"
    ),
]


def tool_messages(request) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "tool"]


async def test_typescript_diagnostics_and_a_definition_in_another_file(server, tmp_path, monkeypatch):
    root = git_init(tmp_path / "web")
    (root / "tsconfig.json").write_text('{"compilerOptions": {"strict": true}}\n')
    (root / "util.ts").write_text("export function helper(x: number): number {\n  return x + 1;\n}\n")
    (root / "main.ts").write_text(
        'import { helper } from "./util";\nconsole.log(helper(1));\nconsole.log(oldMistake);\n'
    )
    patch = "*** Begin Patch\n*** Update File: main.ts\n@@\n console.log(helper(1));\n+console.log(newMistake);\n*** End Patch"
    server.script(
        Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]),
        Reply(
            tool_calls=[ToolCall("lsp", {"operation": "definition", "path": "main.ts", "line": 2, "symbol": "helper"})]
        ),
        Reply(text="done"),
    )
    session = make_session(
        server, root, monkeypatch, "lsp_wait_ms=90000", f'lsp.typescript.command=["{SERVER}", "--stdio"]'
    )
    try:
        await collect_events(session, "edit main.ts")
    finally:
        await session.aclose()
    edit = tool_messages(server.requests[1])[0]
    assert "main.ts:3:13: error: Cannot find name 'newMistake'. [2304]" in edit
    assert "oldMistake" not in edit
    assert tool_messages(server.requests[2])[1].startswith("util.ts:1:17: export function helper")
