"""The sandbox's network by domain, under each mechanism this machine has: real commands (curl,
pip) in the real sandbox reach a test origin on loopback only through the agent's proxy, by a
name the test maps to 127.0.0.1 through the proxy's own resolver (``[sandbox.network] hosts``)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.items import ToolCall
from agent_cli.sandbox.policy import detect_mechanism, proxy_route_works, working_mechanisms
from tests.conftest import REPO
from tests.network_helpers import PAGE, WHEEL, knock, serve_origin
from tests.scripted_model import ScriptedModel, scripted_session
from tests.session_helpers import collect_events

MECHANISMS = [name for name in working_mechanisms() if proxy_route_works(name)]
pytestmark = pytest.mark.skipif(
    not MECHANISMS, reason="no sandbox mechanism that can give commands a network namespace here"
)
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


@pytest.fixture
def origin():
    with serve_origin() as served:
        yield served


@pytest.fixture(params=MECHANISMS)
def mechanism(request, monkeypatch):
    monkeypatch.setenv("AGENT_SANDBOX_MECHANISM", request.param)
    detect_mechanism.cache_clear()
    yield request.param
    detect_mechanism.cache_clear()


def network_settings(allowed: list[str], denied: list[str] = (), names: tuple[str, ...] = ()) -> list[str]:  # type: ignore[assignment]
    """`-c` settings: the lists, and ``names`` resolved to 127.0.0.1 by the proxy."""
    hosts = ", ".join(f'"{name}" = "127.0.0.1"' for name in names)
    return [
        f"sandbox.network.allowed_domains={json.dumps(allowed)}",
        f"sandbox.network.denied_domains={json.dumps(list(denied))}",
        f"sandbox.network.hosts={{{hosts}}}",
    ]


async def run_commands(repo: Path, commands: list[str], settings: list[str], trust: bool = True):
    """Each command as the model's shell call in an `agent exec`-like session; (outputs, events)."""
    calls = [ToolCall(f"call_{i}", "shell", json.dumps({"command": command})) for i, command in enumerate(commands)]
    session = scripted_session(repo, ScriptedModel(*calls, "done"), *settings, trust=trust)
    try:
        events = await collect_events(session, "go")
    finally:
        await session.aclose()
    outputs = [event.output for event in events if isinstance(event, ev.ToolCallEnd)]
    return outputs, events


def refused(events, host: str) -> list[ev.NetworkRequest]:
    return [e for e in events if isinstance(e, ev.NetworkRequest) and e.host == host and not e.allowed]


@needs_curl
async def test_curl_and_pip_reach_an_allowed_name_through_the_proxy(tmp_path, mechanism, origin):
    url = f"http://pypi.test:{origin.port}"
    pip = (
        f"{sys.executable} -m pip download --no-cache-dir --disable-pip-version-check --no-deps "
        f"--index-url {url}/simple/ --trusted-host pypi.test -d dl tinypkg"
    )
    commands = [
        f"curl -sS {url}/",  # plain HTTP through the proxy
        f"curl -sS -p {url}/",  # a CONNECT tunnel, as for https
        f"env -u http_proxy -u HTTP_PROXY curl -sS {url}/",  # ALL_PROXY: SOCKS5, names resolved by the proxy
        pip,
    ]
    outputs, events = await run_commands(tmp_path, commands, network_settings(["pypi.test"], names=("pypi.test",)))
    plain, tunnel, socks, pip_output = outputs
    for output in (plain, tunnel, socks):
        assert "Exit code: 0" in output and PAGE.decode() in output, output
    assert "Exit code: 0" in pip_output, pip_output
    assert (tmp_path / "dl" / WHEEL).is_file()
    assert origin.hosts[:3] == [f"pypi.test:{origin.port}"] * 3  # the name the command used reached it
    allowed = [e for e in events if isinstance(e, ev.NetworkRequest) and e.allowed]
    assert allowed and all(e.host == "pypi.test" and "allowed by pypi.test" in e.by for e in allowed)


@needs_curl
async def test_the_server_hears_the_host_that_was_checked(tmp_path, mechanism, origin):
    """A plain HTTP request to an allowed name with another site's Host header reached the allowed
    address with that Host (a CDN or shared host serves the other site there): past the lists."""
    command = f"curl -sS -H 'Host: unlisted.test' http://pypi.test:{origin.port}/"
    outputs, _ = await run_commands(tmp_path, [command], network_settings(["pypi.test"], names=("pypi.test",)))
    assert "Exit code: 0" in outputs[0], outputs[0]
    assert origin.hosts == [f"pypi.test:{origin.port}"]


@needs_curl
async def test_another_name_is_refused_and_the_model_reads_which_and_how_to_allow_it(tmp_path, mechanism, origin):
    commands = [
        f"curl -sSf http://other.test:{origin.port}/; echo exit=$?",
        f"curl -sS -p http://other.test:{origin.port}/; echo exit=$?",
        f"curl -sS --socks5-hostname 127.0.0.1:3128 http://other.test:{origin.port}/; echo exit=$?",
    ]
    settings = network_settings(["pypi.test"], names=("pypi.test", "other.test"))
    outputs, events = await run_commands(tmp_path, commands, settings)
    for output in outputs:
        # the command's stderr: the proxy's line, then curl's own (the 403 / the SOCKS error)
        assert f"agent sandbox: network: refused other.test:{origin.port} (not in the allowed domains" in output
        assert "exit=0" not in output
        # the tool result, for the model: which host, and how to allow it
        assert re.search(rf"^network: refused other.test:{origin.port} \(", output, re.M), output
        assert "sandbox.network.allowedDomains" in output
    assert all("403" in output for output in outputs[:2]) and "SOCKS5 connection to other.test" in outputs[2]
    assert refused(events, "other.test")
    assert origin.hosts == []


async def test_a_raw_socket_dns_and_a_command_that_ignores_the_proxy_reach_nothing(tmp_path, mechanism, origin):
    probe = f"""
import socket
def attempt(name, action):
    try:
        action()
        print(name, "REACHED")
    except OSError as exc:
        print(name, "failed:", exc)
attempt("raw", lambda: socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP))
attempt("dns", lambda: socket.getaddrinfo("pypi.test", 80) and socket.getaddrinfo("example.com", 80))
attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(b"x", ("8.8.8.8", 53)))
attempt("direct", lambda: socket.create_connection(("127.0.0.1", {origin.port}), timeout=3))
"""
    (tmp_path / "probe.py").write_text(probe)
    commands = [f"{sys.executable} probe.py; env | grep -c AGENT_NETWORK_TOKEN"]
    if shutil.which("curl"):
        commands.append(f"curl -sS --noproxy '*' --max-time 5 http://pypi.test:{origin.port}/; echo exit=$?")
    outputs, _ = await run_commands(tmp_path, commands, network_settings(["pypi.test"], names=("pypi.test",)))
    assert "REACHED" not in outputs[0], outputs[0]
    assert outputs[0].count("failed:") == 4, outputs[0]
    assert outputs[0].rstrip().endswith("\n0")  # the session's token never reaches the command
    if len(outputs) > 1:
        assert "exit=0" not in outputs[1] and PAGE.decode() not in outputs[1]
    assert origin.hosts == []


@needs_curl
async def test_a_denied_domain_wins_over_an_allowed_wildcard(tmp_path, mechanism, origin):
    commands = [f"curl -sS http://{name}.test:{origin.port}/; echo exit=$?" for name in ("good", "evil")]
    settings = network_settings(["*.test"], ["evil.test"], names=("good.test", "evil.test"))
    (good, evil), events = await run_commands(tmp_path, commands, settings)
    assert PAGE.decode() in good
    assert "denied by evil.test" in evil and PAGE.decode() not in evil
    assert origin.hosts == [f"good.test:{origin.port}"]


@needs_curl
async def test_an_untrusted_repositorys_allowed_domains_are_not_applied(tmp_path, mechanism, origin):
    claude = tmp_path / ".claude"
    claude.mkdir()
    (claude / "settings.json").write_text(json.dumps({"sandbox": {"network": {"allowedDomains": ["repo.test"]}}}))
    settings = network_settings(["pypi.test"], names=("pypi.test", "repo.test"))
    commands = [f"curl -sS http://repo.test:{origin.port}/", f"curl -sS http://pypi.test:{origin.port}/"]
    (from_repo, from_user), events = await run_commands(tmp_path, commands, settings, trust=False)
    assert "refused repo.test" in from_repo and PAGE.decode() not in from_repo
    assert PAGE.decode() in from_user
    (trusted_repo, _), _ = await run_commands(tmp_path, commands, settings, trust=True)
    assert PAGE.decode() in trusted_repo  # the same entry, once the folder is trusted


@needs_curl
async def test_the_socket_outside_the_writable_roots_is_reachable_only_by_the_sessions_commands(
    tmp_path, mechanism, origin, monkeypatch
):
    """Where the agent's home is not writable by commands (the usual ~/.agent), the proxy's socket
    is not covered like other host sockets; and it answers nobody without the session's token."""
    home = Path("/var/tmp") if Path("/var/tmp").is_dir() else None
    if home is None:
        pytest.skip("no folder outside the temp dirs")
    agent_home = Path(os.path.realpath(home)) / f"agent-net-test-{os.getpid()}"
    monkeypatch.setenv("AGENT_HOME", str(agent_home))
    try:
        socket_path = f"$(ls -d {agent_home}/network/agent-net-*)/proxy.sock"
        commands = [
            f"curl -sS http://pypi.test:{origin.port}/",
            f'PYTHONPATH={REPO} {sys.executable} -c "{KNOCK}" "{socket_path}" {"0" * 32} {origin.port}',
        ]
        (page, knock), _ = await run_commands(tmp_path, commands, network_settings(["pypi.test"], names=("pypi.test",)))
        assert PAGE.decode() in page
        assert "answer: b''" in knock, knock  # a wrong token: what came with it is closed unread
    finally:
        shutil.rmtree(agent_home, ignore_errors=True)


KNOCK = "import sys; from tests.network_helpers import knock; print('answer:', knock(*sys.argv[1:3], int(sys.argv[3])))"


def knock_from_a_child(path: str, token: str, port: int) -> str:
    """What a process the agent started (not sandboxed) gets from the proxy for ``token``."""
    argv = [sys.executable, "-c", KNOCK, path, token, str(port)]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run(argv, capture_output=True, text=True, timeout=30, env=env).stdout.strip()


async def test_the_proxy_answers_no_one_but_the_bridges_of_its_session(tmp_path, mechanism, origin):
    """A process of the agent's gets an answer only with the session's token; the agent's own
    process gets nothing, token or not; the socket goes with the session."""
    settings = network_settings(["pypi.test"], names=("pypi.test",))
    model = ScriptedModel(ToolCall("call_0", "shell", json.dumps({"command": "true"})), "done")
    session = scripted_session(tmp_path, model, *settings)
    try:
        await collect_events(session, "go")
        proxy = session.approvals.network.proxy
        assert proxy is not None
        answered = await asyncio.to_thread(knock_from_a_child, proxy.path, proxy.token, origin.port)
        assert "200 Connection established" in answered  # the control: the right token opens it
        assert await asyncio.to_thread(knock_from_a_child, proxy.path, "0" * 32, origin.port) == "answer: b''"
        # this process is the agent itself, not a command it started: nothing, token or not
        assert await asyncio.to_thread(knock, proxy.path, proxy.token, origin.port) == b""
    finally:
        await session.aclose()
    assert not Path(proxy.path).exists()  # gone with the session


@needs_curl
async def test_status_and_permissions_show_the_mode_the_lists_and_the_hosts(tmp_path, mechanism, origin):
    settings = network_settings(["pypi.test"], ["evil.test"], names=("pypi.test", "other.test"))
    commands = [f"curl -sS http://pypi.test:{origin.port}/; curl -sS http://other.test:{origin.port}/"]
    calls = [ToolCall("call_0", "shell", json.dumps({"command": commands[0]}))]
    session = scripted_session(tmp_path, ScriptedModel(*calls, "done"), *settings)
    try:
        await collect_events(session, "go")
        status = next(e.text for e in await collect_events(session, "/status") if isinstance(e, ev.Notice))
        permissions = next(e.text for e in await collect_events(session, "/permissions") if isinstance(e, ev.Notice))
    finally:
        await session.aclose()
    assert "network allow-list" in status  # the sandbox line: workspace-write (network allow-list; ...)
    assert '  allowed pypi.test (-c sandbox.network.allowed_domains=["pypi.test"] allowed_domains)' in status
    assert '  denied  evil.test (-c sandbox.network.denied_domains=["evil.test"] denied_domains)' in status
    assert "network: allow-list (1 allowed, 1 denied; others are refused)" in permissions  # nobody to ask
    assert f"  allowed pypi.test:{origin.port} (allowed by pypi.test" in permissions
    assert f"  refused other.test:{origin.port} (not in the allowed domains" in permissions
