"""MCP server configuration: Codex's [mcp_servers] tables, Claude Code's .mcp.json, and the rule that
a session without servers never imports the SDK."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from agent_cli.config import ConfigError, load_config
from agent_cli.mcp.config import configured_servers, load_mcp_json, parse_mcp_json
from tests.conftest import REPO


def write_config(home, text: str) -> None:
    (home / "config.toml").write_text(text)


def test_codex_tables_become_specs_with_defaults_and_overrides(tmp_path, isolated_home):
    write_config(
        isolated_home,
        """
[mcp_servers.files]
command = "npx"
args = ["-y", "fs"]
env = { ROOT = "/srv" }
tool_timeout_sec = 5
disabled_tools = ["delete"]

[mcp_servers.web]
url = "https://example.test/mcp"
bearer_token_env_var = "WEB_TOKEN"
http_headers = { X-Team = "core" }
enabled = false
""",
    )
    config = load_config(tmp_path)
    servers = configured_servers(config.raw, tmp_path)
    files, web = servers.specs
    assert (files.transport, files.command, files.args, dict(files.env)) == (
        "stdio",
        "npx",
        ("-y", "fs"),
        {"ROOT": "/srv"},
    )
    assert (files.startup_timeout_sec, files.tool_timeout_sec) == (10.0, 5.0)
    assert files.offers("read") and not files.offers("delete")
    assert (web.transport, web.url, dict(web.headers), web.enabled) == (
        "http",
        "https://example.test/mcp",
        {"X-Team": "core"},
        False,
    )
    assert config.mcp_tool_budget_percent == 5


@pytest.mark.parametrize(
    "entry, message",
    [
        ("command = 3", "`mcp_servers.x.command` must be a string"),
        ('command = "a"\nurl = "http://b"', "not both"),
        ('command = "a"\ntool_timeout_sec = 0', "positive number of seconds"),
        ('command = "a"\nargs = [1]', "array of strings"),
        ('command = "a"\ntimeout = 3', "`mcp_servers.x.timeout`: unknown key"),
        ('url = "mcp.example.test/mcp"', "`mcp_servers.x.url` must start with http:// or https://"),
    ],
)
def test_a_bad_entry_names_the_file_and_the_key(tmp_path, isolated_home, entry, message):
    write_config(isolated_home, f"[mcp_servers.x]\n{entry}\n")
    with pytest.raises(ConfigError) as caught:
        load_config(tmp_path)
    assert str(isolated_home / "config.toml") in str(caught.value) and message in str(caught.value)


def test_mcp_json_expands_variables_and_extra_values(tmp_path, monkeypatch):
    monkeypatch.setenv("API_HOST", "api.example.test")
    monkeypatch.delenv("MISSING", raising=False)
    data = {
        "mcpServers": {
            "tools": {
                "command": "${CLAUDE_PLUGIN_ROOT}/bin/server",
                "args": ["--level=${LEVEL:-info}"],
                "env": {"HOST": "${API_HOST}"},
            },
            "remote": {
                "type": "sse",
                "url": "https://${API_HOST}/sse",
                "headers": {"Authorization": "Bearer ${TOKEN:-none}"},
            },
            "broken": {"command": "x", "args": ["${MISSING}"]},
            "bad type": {"command": "x"},
            "bare": {"type": "http", "url": "${API_HOST}/mcp"},
        }
    }
    specs, warnings = parse_mcp_json(data, "plugin/.mcp.json", {"CLAUDE_PLUGIN_ROOT": "/plugins/p"}, scope="plugin:p")
    tools, remote = specs
    assert (
        tools.command == "/plugins/p/bin/server"
        and tools.args == ("--level=info",)
        and tools.env["HOST"] == "api.example.test"
    )
    assert tools.scope == "plugin:p"
    assert (remote.transport, remote.url, remote.headers["Authorization"]) == (
        "sse",
        "https://api.example.test/sse",
        "Bearer none",
    )
    assert any("`mcpServers.broken.args`" in w and "${MISSING} is not set" in w for w in warnings)
    assert any("`mcpServers.bad type`" in w for w in warnings)
    assert any(
        "`mcpServers.bare.url` must start with http:// or https://, got 'api.example.test/mcp'" in w for w in warnings
    )


def test_project_mcp_json_is_read_and_config_wins_or_overrides(tmp_path, isolated_home):
    (tmp_path / ".mcp.json").write_text(
        json.dumps(
            {
                "mcpServers": {
                    "team": {"command": "team-server"},
                    "docs": {"type": "http", "url": "http://127.0.0.1:1/mcp"},
                }
            }
        )
    )
    write_config(isolated_home, '[mcp_servers.docs]\ncommand = "my-docs"\n\n[mcp_servers.team]\nenabled = false\n')
    config = load_config(tmp_path)
    servers = {spec.name: spec for spec in configured_servers(config.raw, tmp_path).specs}
    assert servers["docs"].command == "my-docs" and servers["docs"].scope == "user"
    assert servers["team"].scope == "project" and not servers["team"].enabled


def test_unreadable_mcp_json_is_a_warning(tmp_path):
    (tmp_path / ".mcp.json").write_text("{not json")
    specs, warnings = load_mcp_json(tmp_path / ".mcp.json")
    assert specs == [] and "cannot read MCP servers" in warnings[0]


def test_a_session_without_servers_never_imports_the_sdk(tmp_path):
    code = (
        "import sys; from pathlib import Path; from agent_cli.config import load_config; "
        "from agent_cli.runtime import open_session; s = open_session(load_config(Path(sys.argv[1])), interactive=False); "
        "s.start_mcp(); print(s.mcp, [m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types'))])"
    )
    out = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path)], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert out.stdout.strip() == "None []"


def test_oauth_settings_in_both_shapes(tmp_path, isolated_home):
    write_config(
        isolated_home,
        """
[mcp_servers.codex]
url = "https://mcp.example.test/mcp"
oauth = { client_id = "agent", callback_port = 8765 }
scopes = ["read", "write"]

[mcp_servers.token]
url = "https://mcp.example.test/mcp"
bearer_token_env_var = "TOKEN"
""",
    )
    specs = configured_servers(load_config(tmp_path).raw, None).specs
    codex, token = specs
    assert (codex.oauth_client_id, codex.oauth_callback_port, codex.oauth_scopes) == ("agent", 8765, ("read", "write"))
    assert token.oauth_client_id is None and token.bearer_token_env_var == "TOKEN"
    data = {
        "mcpServers": {
            "c": {"type": "http", "url": "https://x.test/mcp", "oauth": {"clientId": "id", "callbackPort": 9}}
        }
    }
    [claude], warnings = parse_mcp_json(data, ".mcp.json")
    assert warnings == [] and (claude.oauth_client_id, claude.oauth_callback_port) == ("id", 9)
    bad = {"mcpServers": {"c": {"url": "https://x.test/mcp", "oauth": {"clientSecret": "s"}}}}
    [warning] = parse_mcp_json(bad, ".mcp.json")[1]
    assert "`mcpServers.c.oauth`: unknown key 'clientSecret'" in warning
    write_config(isolated_home, '[mcp_servers.x]\nurl = "https://x.test"\noauth = { port = 3 }\n')
    with pytest.raises(ConfigError, match="mcp_servers.x.oauth"):
        load_config(tmp_path)
