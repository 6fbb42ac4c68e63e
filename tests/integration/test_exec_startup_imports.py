"""`agent exec` loads only what its run uses: a plain prompt with one shell call never imports the
modules that only other features need (they are imported inside the functions that use them).

The whole run is checked, the HTTP library's thread and the tool call included, from Python's
own import log (``PYTHONPROFILEIMPORTTIME``); nothing here measures time.
"""

from __future__ import annotations

import re

import pytest

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall

NEVER_IMPORTED = (
    # the SDKs (~1 s of import for openai, ~2.5 s for anthropic; only the tests use them), pydantic
    # (theirs), and the libraries of features this run does not use
    "openai", "anthropic", "pydantic", "mcp", "PIL", "markitdown", "textual", "rich",
    # the standard library's slower modules, wanted only by later or other steps
    "tomllib",  # no config file and no -c: nothing to parse
    "sqlite3",  # no memory stored yet: recall opens (and creates) no database
    "ctypes",  # bubblewrap is chosen: Landlock is never probed
    "difflib",  # diffs of patches, command suggestions
    "xml.sax",  # it imports urllib.request; the context escapes with html.escape
    # our own modules for slash commands, @-expansion, file reading, patches, MCP servers,
    # memories and --json
    "agent_cli.commands.registry", "agent_cli.commands.builtins", "agent_cli.commands.expand",
    "agent_cli.files.detect", "agent_cli.files.view", "agent_cli.files.images", "agent_cli.tools.patch_parser",
    "agent_cli.mcp.manager", "agent_cli.mcp.tools", "agent_cli.memory.store", "agent_cli.headless.render_json",
)
IMPORT_LINE = re.compile(r"^import time:\s+\d+ \|\s+\d+ \|\s*(\S+)$", re.MULTILINE)


@pytest.mark.parametrize("provider", ["openai-chat", "openai", "anthropic"])
def test_a_plain_exec_round_trip_never_imports_what_only_other_features_need(provider, server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo hi"})]), Reply(text="done"))
    env = {
        **provider_env(server, provider),
        "PYTHONPROFILEIMPORTTIME": "1",
        "AGENT_SANDBOX_MECHANISM": "bubblewrap",  # where it does not work, commands run unconfined
    }
    result = run_agent(["exec", "--provider", provider, "-m", "test-model", "say hi"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "done\n"
    server.assert_done()  # the shell call ran and its output went back
    imported = set(IMPORT_LINE.findall(result.stderr))
    # the log is there (modules the main thread imports: lines of the HTTP library's import
    # thread can interleave with them on stderr)
    assert {"agent_cli.session.turn", "agent_cli.tools.shell"} <= imported
    loaded = sorted(name for name in imported if any(name == top or name.startswith(top + ".") for top in NEVER_IMPORTED))
    assert loaded == []
