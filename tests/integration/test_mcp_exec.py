"""`agent exec` with an MCP server, and `agent mcp`, as real subprocesses."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import sys

from tests.conftest import agent_process_env, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.integration.test_mcp_session import DEMO, server_table
from tests.processes import alive
from tests.waiting import wait_for

EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model"]


def server_pids(home) -> list[int]:
    log = (home / "logs" / "mcp-demo.log").read_text()
    return [int(pid) for pid in re.findall(r"demo server (\d+) starting", log)]


def test_exec_json_reports_mcp_tool_calls_and_leaves_no_process(server, tmp_path, isolated_home):
    (isolated_home / "config.toml").write_text(server_table("demo", DEMO))
    server.script(
        Reply(tool_calls=[ToolCall("mcp__demo__echo", {"text": "hi"}), ToolCall("mcp__demo__fail", {})]),
        Reply(text="done"),
    )
    result = run_agent([*EXEC, "--json", "use it"], cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    items = [json.loads(line)["item"] for line in result.stdout.splitlines() if '"item.completed"' in line]
    calls = [item for item in items if item["type"] == "mcp_tool_call"]
    assert calls[0] == {
        "id": calls[0]["id"],
        "type": "mcp_tool_call",
        "server": "demo",
        "tool": "echo",
        "arguments": {"text": "hi"},
        "result": {"content": [{"type": "text", "text": "echo: hi"}], "structured_content": None},
        "error": None,
        "status": "completed",
    }
    assert calls[1]["status"] == "failed" and calls[1]["result"] is None and calls[1]["error"]["message"]
    assert "demo server" not in result.stdout + result.stderr  # server stderr goes to the log file only
    [pid] = server_pids(isolated_home)
    assert not alive(pid)


def test_ctrl_c_during_an_mcp_call_stops_the_server_too(server, tmp_path, isolated_home):
    (isolated_home / "config.toml").write_text(server_table("demo", DEMO))
    server.script(Reply(tool_calls=[ToolCall("mcp__demo__slow", {"seconds": 60})]))
    env = agent_process_env(**provider_env(server, "openai-chat"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *EXEC, "wait"],
        cwd=tmp_path,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    log = isolated_home / "logs" / "mcp-demo.log"
    wait_for(
        lambda: log.exists() and "slow call started" in log.read_text(), within=90, what="the call to reach the server"
    )
    proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 130, stderr
    assert "demo.slow" in stderr  # text mode shows server.tool(args)
    [pid] = server_pids(isolated_home)
    assert not alive(pid)


def test_agent_mcp_add_refuses_options_of_the_other_transport(tmp_path, isolated_home):
    result = run_agent(["mcp", "add", "x", "--bearer-token-env-var", "T", "--", "server-cmd"], cwd=tmp_path)
    assert result.returncode == 2 and "apply only to HTTP servers" in result.stderr
    result = run_agent(["mcp", "add", "y", "--env", "K=V", "--url", "http://127.0.0.1:9/mcp"], cwd=tmp_path)
    assert result.returncode == 2 and "apply only to stdio servers" in result.stderr
    assert not (isolated_home / "config.toml").exists()


def test_agent_mcp_add_list_remove_keeps_the_config_file_layout(tmp_path, isolated_home):
    config = isolated_home / "config.toml"
    config.write_text('# my settings\nmodel = "gpt-5"  # the default\n')
    added = run_agent(["mcp", "add", "files", "--env", "ROOT=/srv", "--", "npx", "-y", "fs-server"], cwd=tmp_path)
    assert added.returncode == 0, added.stderr
    run_agent(
        ["mcp", "add", "web", "--url", "http://127.0.0.1:9/mcp", "--bearer-token-env-var", "WEB_TOKEN"], cwd=tmp_path
    )
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"team": {"command": "${TEAM_BIN:-team-server}"}}}))
    listed = run_agent(["mcp", "list"], cwd=tmp_path)
    assert re.search(r"files\s+stdio\s+npx -y fs-server", listed.stdout)
    assert re.search(r"web\s+http\s+http://127.0.0.1:9/mcp", listed.stdout)
    assert re.search(r"team\s+stdio\s+team-server\s+\(this folder is not trusted: it does not start\)", listed.stdout)
    assert "files" in listed.stdout and listed.stdout.count("not trusted") == 1  # the user's own servers start
    got = json.loads(run_agent(["mcp", "get", "files", "--json"], cwd=tmp_path).stdout)
    assert got["command"] == "npx" and got["args"] == ["-y", "fs-server"] and got["env"] == ["ROOT"]
    again = run_agent(["mcp", "add", "files", "--", "other"], cwd=tmp_path)
    assert again.returncode == 2 and "already exists" in again.stderr
    assert run_agent(["mcp", "remove", "files"], cwd=tmp_path).returncode == 0
    missing = run_agent(["mcp", "remove", "team"], cwd=tmp_path)
    assert missing.returncode == 2 and ".mcp.json" in missing.stderr
    text = config.read_text()
    assert text.startswith('# my settings\nmodel = "gpt-5"  # the default\n')
    assert "[mcp_servers.web]" in text and "files" not in text


def test_agent_mcp_list_and_get_take_plugin_dir_like_a_session(tmp_path, isolated_home):
    from tests.plugin_fixtures import write_plugin

    write_plugin(
        tmp_path / "dev", "kit", {".mcp.json": {"mcpServers": {"db": {"command": "${CLAUDE_PLUGIN_ROOT}/db-server"}}}}
    )
    listed = run_agent(["mcp", "list", "--plugin-dir", str(tmp_path / "dev")], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert re.search(r"db\s+stdio\s+\S+/dev/kit/db-server", listed.stdout)
    got = run_agent(["mcp", "get", "db", "--json", "--plugin-dir", str(tmp_path / "dev" / "kit")], cwd=tmp_path)
    assert json.loads(got.stdout)["scope"] == "plugin kit"
