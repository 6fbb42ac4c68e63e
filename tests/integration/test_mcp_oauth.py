"""OAuth MCP servers end to end: the SDK's own authorization and resource server
(tests/mcp_servers/oauth_server.py) in this process, `agent mcp login` and `agent exec` as real
subprocesses, and a scripted browser ($BROWSER) that signs in and follows the redirect to the
agent's loopback listener."""

from __future__ import annotations

import json
import socket
import stat
import sys
import time

import pytest

from agent_cli.mcp import oauth
from agent_cli.mcp.config import ServerSpec
from tests.conftest import REPO, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.integration import test_mcp_session
from tests.mcp_servers.oauth_server import serve_oauth
from tests.session_helpers import collect_events

EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model"]
BROWSER = f"{sys.executable} -P {REPO / 'tests' / 'mcp_servers' / 'browser.py'} %s"


mcp_session = test_mcp_session.make_session  # the fixture, under a name of this file


@pytest.fixture
def oauth_server():
    with serve_oauth() as served:
        yield served


@pytest.fixture
def browser_env(tmp_path):
    log = tmp_path / "browser.log"
    return {"BROWSER": BROWSER, "TEST_BROWSER_LOG": str(log), "TEST_BROWSER_USER": "alice"}, log


def opened(log) -> list[str]:
    return log.read_text().splitlines() if log.exists() else []


def tool_output(request, call_id: str) -> str:
    return next(m["content"] for m in request.body["messages"] if m.get("tool_call_id") == call_id)


def tool_names(request) -> set[str]:
    return {tool["function"]["name"] for tool in request.body.get("tools", [])}


def test_login_call_refresh_revoke_logout(server, tmp_path, isolated_home, oauth_server, browser_env):
    url, provider = oauth_server
    env, log = browser_env
    env = {**env, **provider_env(server, "openai-chat")}
    (isolated_home / "config.toml").write_text(f'[mcp_servers.sec]\nurl = "{url}"\nstartup_timeout_sec = 30\n')
    work = tmp_path / "work"
    work.mkdir()

    # never logged in: exec skips the server with one line and does not wait for a browser
    server.script(Reply(text="done"))
    started = time.monotonic()
    result = run_agent([*EXEC, "hi"], cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 45
    lines = [line for line in result.stderr.splitlines() if "'sec'" in line]
    assert len(lines) == 1 and "needs a login: run `agent mcp login sec`" in lines[0], result.stderr
    assert "its tools are left out" in lines[0]
    assert not any(name.startswith("mcp__sec") for name in tool_names(server.requests[-1]))
    assert opened(log) == [] and provider.clients == {}  # nothing registered, no browser

    # login: discovery, registration, PKCE with resource, the browser signs in on the loopback
    result = run_agent(["mcp", "login", "sec"], cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    [authorize] = opened(log)
    assert authorize in result.stdout  # printed too, for a remote shell
    assert "code_challenge_method=S256" in authorize and "resource=" in authorize
    assert "redirect_uri=http%3A%2F%2F127.0.0.1%3A" in authorize
    assert provider.logins == 1 and len(provider.clients) == 1
    [stored] = (isolated_home / "mcp-auth").iterdir()
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(stored.parent.stat().st_mode) == 0o700
    data = json.loads(stored.read_text())
    assert data["server_url"] == url and data["tokens"]["access_token"] in provider.access
    assert not list(work.rglob("*.json"))

    def call_whoami() -> str:
        server.script(Reply(tool_calls=[ToolCall("mcp__sec__whoami", {}, "w")]), Reply(text="done"))
        result = run_agent([*EXEC, "who"], cwd=work, env=env)
        assert result.returncode == 0, result.stderr
        assert data["tokens"]["access_token"] not in result.stdout + result.stderr
        return tool_output(server.requests[-1], "w")

    assert call_whoami() == "signed in as alice"
    listed = run_agent(["mcp", "list"], cwd=work, env=env)
    assert listed.stdout.split() == ["sec", "http", url, "(logged", "in)"], listed.stdout
    session_files = list((isolated_home / "sessions").rglob("*")) if (isolated_home / "sessions").exists() else []
    for path in [p for p in session_files if p.is_file()] + list((isolated_home / "logs").glob("*")):
        assert data["tokens"]["access_token"] not in path.read_text(errors="replace")

    # the server stops accepting the token (expired early): refreshed after the 401, no browser
    for token in provider.access.values():
        token.expires_at = int(time.time()) - 1
    assert call_whoami() == "signed in as alice"
    assert provider.refreshes == 1 and provider.logins == 1 and len(opened(log)) == 1

    # the stored expiry passed: refreshed before the request is sent
    stored_data = json.loads(stored.read_text())
    stored_data["expires_at"] = time.time() - 5
    stored.write_text(json.dumps(stored_data))
    assert call_whoami() == "signed in as alice"
    assert provider.refreshes == 2 and len(opened(log)) == 1

    # revoked: the refresh fails too; exec skips the server, a new login answers it
    provider.revoke_all()
    server.script(Reply(text="done"))
    result = run_agent([*EXEC, "hi"], cwd=work, env=env)
    assert result.returncode == 0 and "'sec' needs a login" in result.stderr, result.stderr
    assert not any(name.startswith("mcp__sec") for name in tool_names(server.requests[-1]))
    result = run_agent(["mcp", "login", "sec"], cwd=work, env=env)
    assert result.returncode == 0, result.stderr
    assert provider.logins == 2 and len(provider.clients) == 1  # the registration was reused
    assert call_whoami() == "signed in as alice"

    # logout: the file is gone and the server needs a login again
    result = run_agent(["mcp", "logout", "sec"], cwd=work, env=env)
    assert result.returncode == 0 and "logged out of sec" in result.stdout
    assert not stored.exists()
    server.script(Reply(text="done"))
    result = run_agent([*EXEC, "hi"], cwd=work, env=env)
    assert "'sec' needs a login" in result.stderr


def test_a_bearer_token_from_env_is_sent_and_never_replaced_by_oauth(server, tmp_path, isolated_home, oauth_server):
    url, provider = oauth_server
    provider.access.clear()
    token = provider._issue("pre", ["mcp"], None, "bob").access_token
    (isolated_home / "config.toml").write_text(
        f'[mcp_servers.sec]\nurl = "{url}"\nbearer_token_env_var = "SEC_TOKEN"\nstartup_timeout_sec = 30\n'
    )
    server.script(Reply(tool_calls=[ToolCall("mcp__sec__whoami", {}, "w")]), Reply(text="done"))
    env = {**provider_env(server, "openai-chat"), "SEC_TOKEN": token}
    result = run_agent([*EXEC, "who"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert tool_output(server.requests[-1], "w") == "signed in as bob"
    assert not (isolated_home / "mcp-auth").exists()


def test_exec_declines_an_elicitation_or_answers_it_from_config(
    server, tmp_path, isolated_home, oauth_server, browser_env
):
    url, provider = oauth_server
    env, log = browser_env
    env = {**env, **provider_env(server, "openai-chat")}
    (isolated_home / "config.toml").write_text(f'[mcp_servers.sec]\nurl = "{url}"\nstartup_timeout_sec = 30\n')
    assert run_agent(["mcp", "login", "sec"], cwd=tmp_path, env=env).returncode == 0
    server.script(Reply(tool_calls=[ToolCall("mcp__sec__ask", {}, "a")]), Reply(text="done"))
    result = run_agent([*EXEC, "ask"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert tool_output(server.requests[-1], "a") == "no answer (decline)"
    assert "MCP server 'sec' asked for input ('Who should be greeted?'); declined" in result.stderr

    # answered from config where nobody can be asked: the values fill the form, checked as the form checks them
    config = isolated_home / "config.toml"
    config.write_text(config.read_text() + 'elicitation_values = { name = "Eve", count = "4" }\n')
    server.script(Reply(tool_calls=[ToolCall("mcp__sec__ask", {}, "a")]), Reply(text="done"))
    result = run_agent([*EXEC, "ask"], cwd=tmp_path, env=env)
    assert tool_output(server.requests[-1], "a") == "hello Eve x4"
    assert "answered from elicitation_values" in result.stderr


def test_a_pre_registered_client_id_logs_in_without_registering(
    server, tmp_path, isolated_home, oauth_server, browser_env
):
    from mcp.shared.auth import OAuthClientInformationFull

    url, provider = oauth_server
    env, log = browser_env
    env = {**env, **provider_env(server, "openai-chat")}
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    provider.clients["agent-fixed"] = OAuthClientInformationFull(
        client_id="agent-fixed",
        redirect_uris=[f"http://127.0.0.1:{port}/callback"],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        scope="mcp",
    )
    (isolated_home / "config.toml").write_text(
        f'[mcp_servers.sec]\nurl = "{url}"\nstartup_timeout_sec = 30\n'
        f'oauth = {{ client_id = "agent-fixed", callback_port = {port} }}\n'
    )
    result = run_agent(["mcp", "login", "sec"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    [authorize] = opened(log)
    assert "client_id=agent-fixed" in authorize and f"127.0.0.1%3A{port}%2Fcallback" in authorize
    assert list(provider.clients) == ["agent-fixed"]  # nothing registered
    server.script(Reply(tool_calls=[ToolCall("mcp__sec__whoami", {}, "w")]), Reply(text="done"))
    result = run_agent([*EXEC, "who"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert tool_output(server.requests[-1], "w") == "signed in as alice"


async def test_a_token_revoked_mid_session_fails_the_call_clearly_and_a_login_recovers(
    server,
    mcp_session,
    oauth_server,
    browser_env,
    monkeypatch,  # noqa: F811
):
    url, provider = oauth_server
    env, log = browser_env
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    spec = ServerSpec("sec", "http", "test", url=url)
    await oauth.login(spec, lambda line: None)
    session = mcp_session(f'[mcp_servers.sec]\nurl = "{url}"\nstartup_timeout_sec = 30\n')
    server.script(
        Reply(tool_calls=[ToolCall("mcp__sec__whoami", {}, "w1")]),
        Reply(text="ok"),
        Reply(tool_calls=[ToolCall("mcp__sec__grow", {}, "g")]),
        Reply(text="grown"),
        Reply(text="noted"),
        Reply(tool_calls=[ToolCall("mcp__sec__whoami", {}, "w2")]),
        Reply(text="it failed"),
        Reply(tool_calls=[ToolCall("mcp__sec__whoami", {}, "w3")]),
        Reply(text="ok again"),
    )
    await collect_events(session, "who")
    assert tool_output(server.requests[-1], "w1") == "signed in as alice"
    assert "mcp__sec__extra" not in tool_names(server.requests[-1])
    await collect_events(session, "grow")  # the server adds a tool and says so (list_changed over HTTP)
    assert "mcp__sec__extra" not in tool_names(server.requests[-1])  # never in the middle of a turn
    await collect_events(session, "again")
    assert "mcp__sec__extra" in tool_names(server.requests[-1])
    assert "Added: mcp__sec__extra" in server.requests[-1].body["messages"][-1]["content"]
    provider.revoke_all()
    await collect_events(session, "who now")
    failed = tool_output(server.requests[-1], "w2")
    assert "needs a login" in failed or "expired or was revoked" in failed, failed
    assert "agent mcp login sec" in failed
    await session.mcp.manager.login("sec", lambda line: None)
    await collect_events(session, "and now")
    assert tool_output(server.requests[-1], "w3") == "signed in as alice"
    assert provider.logins == 2
    await session.aclose()
