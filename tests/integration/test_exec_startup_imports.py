"""`agent exec` loads only what its run uses of the heavy and optional packages: a plain prompt with
one shell call never imports the SDK of another wire, Textual, MCP, Pillow, MarkItDown, tiktoken
or the cloud providers' extras (they are imported inside the functions that use them). The SDK of
the wire in use loads with the first request (sdk_clients.py). The project's own modules are
imported at the top of each file (tests/tui/test_imports.py), so they are not listed here.
The garbage collector, paused while exec starts, is back on once the first request is ready, with
what start-up made frozen (startup_gc.py).

The whole run is checked, the first request and the tool call included: the process
writes the names in ``sys.modules`` when it exits (exec runs ``atexit`` handlers before it ends).
Nothing here measures time.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import agent_process_env, provider_env
from tests.fake_server import Reply, ToolCall

NEVER_IMPORTED = (
    # the cloud providers' extras, and the libraries of features this run does not use
    "boto3",
    "botocore",
    "google.auth",
    "mcp",
    "PIL",
    "markitdown",
    "tiktoken",
    "acp",
    "textual",
    "rich",
    # the standard library's slower modules, wanted only by later or other steps
    "tomllib",  # no config file and no -c: nothing to parse
    "difflib",  # diffs of patches, command suggestions
)
# `python -m agent_cli ARGS`, writing the modules loaded by the end of the run to $MODULES_OUT, and
# whether the garbage collector is on and how many objects it leaves frozen to $MODULES_OUT.gc.
RUN_AND_LIST_MODULES = (
    "import atexit, gc, os, runpy, sys\n"
    "atexit.register(lambda: open(os.environ['MODULES_OUT'], 'w').write('\\n'.join(sys.modules)))\n"
    "atexit.register(lambda: open(os.environ['MODULES_OUT'] + '.gc', 'w').write(\n"
    "    f'{gc.isenabled()} {gc.get_freeze_count()}'))\n"
    "sys.argv[0] = 'agent'\n"
    "runpy.run_module('agent_cli', run_name='__main__', alter_sys=True)\n"
)


SDK_OF = {"openai-chat": "openai", "openai": "openai", "anthropic": "anthropic"}


@pytest.mark.parametrize("provider", ["openai-chat", "openai", "anthropic"])
def test_a_plain_exec_round_trip_never_imports_what_only_other_features_need(provider, server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo hi"})]), Reply(text="done"))
    listing = tmp_path / "modules.txt"
    env = {
        **agent_process_env(**provider_env(server, provider)),
        "MODULES_OUT": str(listing),
        "AGENT_SANDBOX_MECHANISM": "bubblewrap",  # where it does not work, commands run unconfined
    }
    result = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_MODULES, "exec", "--provider", provider, "-m", "test-model", "say hi"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == "done\n"
    server.assert_done()  # the shell call ran and its output went back
    imported = set(listing.read_text().split())
    assert {"agent_cli.session.turn", "agent_cli.tools.shell", "httpx2"} <= imported  # the listing is whole
    other_sdk = ({"openai", "anthropic"} - {SDK_OF[provider]}).pop()
    assert SDK_OF[provider] in imported  # with the first request
    loaded = sorted(
        name
        for name in imported
        if any(name == top or name.startswith(top + ".") for top in (*NEVER_IMPORTED, other_sdk))
    )
    assert loaded == [], "\n".join(loaded)
    enabled, frozen = (tmp_path / "modules.txt.gc").read_text().split()
    assert enabled == "True" and int(frozen) > 100_000  # on again, start-up's objects set aside


def test_a_piped_command_that_needs_no_model_imports_no_sdk(server, tmp_path):
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "new.txt").write_text("fresh line\n")
    listing = tmp_path / "modules.txt"
    env = {**agent_process_env(**provider_env(server, "anthropic")), "MODULES_OUT": str(listing)}
    result = subprocess.run(
        [sys.executable, "-c", RUN_AND_LIST_MODULES, "exec", "--provider", "anthropic", "-m", "test-model"],
        cwd=tmp_path,
        env=env,
        input="/diff\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr[-3000:]
    assert "+fresh line" in result.stdout
    imported = set(listing.read_text().split())
    assert "agent_cli.headless.exec" in imported  # the listing is whole
    assert not {"anthropic", "openai"} & imported
    assert server.requests == []
