"""The sandbox's network in `agent exec` (a subprocess, against the fake model server): a refused
host in `--json` and in what the model reads, web_fetch by the same lists, and the proxy and
its bridges ending with the agent (checked by PID)."""

from __future__ import annotations

import json
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.sandbox.policy import proxy_route_works, working_mechanisms
from tests.conftest import agent_process_env, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.network_helpers import PAGE, serve_origin
from tests.processes import gone
from tests.waiting import until

MECHANISMS = [name for name in working_mechanisms() if proxy_route_works(name)]
needs_network_sandbox = pytest.mark.skipif(
    not MECHANISMS, reason="no sandbox mechanism that can give commands a network namespace here"
)
needs_curl = pytest.mark.skipif(shutil.which("curl") is None, reason="curl is not installed")


@pytest.fixture
def origin():
    with serve_origin() as served:
        yield served


def exec_args(*rest: str) -> list[str]:
    return ["exec", "--provider", "openai-chat", "-m", "test-model", *rest]


def settings(allowed: list[str], names: tuple[str, ...] = (), denied: list[str] = ()) -> list[str]:  # type: ignore[assignment]
    hosts = ", ".join(f'"{name}" = "127.0.0.1"' for name in names)
    return [
        "-c",
        f"sandbox.network.allowed_domains={json.dumps(allowed)}",
        "-c",
        f"sandbox.network.denied_domains={json.dumps(list(denied))}",
        "-c",
        f"sandbox.network.hosts={{{hosts}}}",
    ]


def tool_outputs(server) -> list[str]:
    last = server.requests[-1].body["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


def proxy_folders(agent_home: Path) -> list[Path]:
    return sorted((agent_home / "network").glob("agent-net-*"))


@needs_network_sandbox
@needs_curl
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_exec_json_names_the_refused_host_and_the_model_reads_how_to_allow_it(
    server, tmp_path, origin, mechanism, isolated_home
):
    command = f"curl -sS http://pypi.test:{origin.port}/ && curl -sSf http://other.test:{origin.port}/"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": command})]), Reply(text="done"))
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    args = exec_args(*settings(["pypi.test"], ("pypi.test", "other.test")), "--json", "go")
    result = run_agent(args, cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    items = [json.loads(line).get("item", {}) for line in result.stdout.splitlines()]
    requests = [(i["host"], i["decision"]) for i in items if i.get("type") == "network_request"]
    assert requests == [("pypi.test", "allowed"), ("other.test", "refused")]
    refusal = next(i for i in items if i.get("type") == "network_request" and i["decision"] == "refused")
    assert "not in the allowed domains" in refusal["reason"] and refusal["port"] == origin.port
    (output,) = tool_outputs(server)
    assert PAGE.decode() in output
    assert f"agent sandbox: network: refused other.test:{origin.port}" in output  # the command's stderr
    assert f"\nnetwork: refused other.test:{origin.port} (" in output  # the note for the model
    assert "allowedDomains" in output
    assert proxy_folders(isolated_home) == []  # the proxy's socket went with the session
    (session_file,) = (isolated_home / "sessions").rglob("*.jsonl")
    logged = [json.loads(line) for line in session_file.read_text().splitlines() if '"network"' in line]
    logged = [(r["host"], r["allowed"]) for r in logged if r.get("type") == "network"]
    assert logged == [("pypi.test", True), ("other.test", False)]  # each decision, once, in the session file


def test_web_fetch_goes_by_the_same_lists(server, tmp_path, origin):
    """Without network in the sandbox and nobody to ask, an allowed domain is fetched (a name
    listed exactly may be a loopback address), a denied one is refused even with the network on."""
    url = f"http://localhost:{origin.port}/"
    server.script(Reply(tool_calls=[ToolCall("web_fetch", {"url": url})]), Reply(text="done"))
    env = provider_env(server, "openai-chat")
    result = run_agent(exec_args(*settings(["localhost"]), "go"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert PAGE.decode() in tool_outputs(server)[0]
    server.script(Reply(tool_calls=[ToolCall("web_fetch", {"url": url})]), Reply(text="done"))
    denied = settings(["localhost"], denied=["localhost"])
    result = run_agent(exec_args(*denied, "-c", "network_access=true", "go"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "localhost was refused (denied by localhost" in tool_outputs(server)[0]
    # a redirect from an allowed domain to a denied one is refused at the redirect
    away = f"http://localhost:{origin.port}/redirect?to=http://127.0.0.1:{origin.port}/"
    server.script(Reply(tool_calls=[ToolCall("web_fetch", {"url": away})]), Reply(text="done"))
    redirected = settings(["localhost"], denied=["127.0.0.1"])
    result = run_agent(exec_args(*redirected, "go"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "refused: 127.0.0.1 is denied by 127.0.0.1" in tool_outputs(server)[0]
    assert origin.hosts == [f"localhost:{origin.port}"] * 2


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (found from /proc, outside any sandbox's pid namespace)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found += children
        todo += children
    return found


@needs_network_sandbox
@needs_curl
@pytest.mark.parametrize("mechanism", MECHANISMS)
async def test_the_proxy_and_the_bridge_end_with_the_agent(server, tmp_path, origin, mechanism, isolated_home):
    command = f"curl -sS http://pypi.test:{origin.port}/ && sleep 37451"
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": command})]))  # the agent is killed meanwhile
    env = agent_process_env(**provider_env(server, "openai-chat"), AGENT_SANDBOX_MECHANISM=mechanism)
    args = exec_args(*settings(["pypi.test"], ("pypi.test",)), "go")
    agent = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", *args],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        await until(lambda: origin.hosts, within=60, what="the request through the proxy")
        launchers = await until(
            lambda: [
                pid for pid in descendants(agent.pid) if b"launcher.py" in Path(f"/proc/{pid}/cmdline").read_bytes()
            ],
            what="the launcher that serves the bridge",
        )
        (folder,) = proxy_folders(isolated_home)
        below = descendants(agent.pid)
        agent.send_signal(signal.SIGKILL)
        agent.wait(timeout=30)
        for pid in [*launchers, *below]:
            assert await gone(pid, within=10), f"{pid} outlived the agent"
        with socket.socket(socket.AF_UNIX) as client, pytest.raises(ConnectionRefusedError):
            client.connect(str(folder / "proxy.sock"))  # nobody answers there any more
    finally:
        if agent.poll() is None:
            agent.kill()
            agent.wait()
    # the next session clears what the killed one could not
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": f"curl -sS http://pypi.test:{origin.port}/"})]),
        Reply(text="done"),
    )
    result = run_agent(
        exec_args(*settings(["pypi.test"], ("pypi.test",)), "go"),
        cwd=tmp_path,
        env={**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism},
    )
    assert result.returncode == 0, result.stderr
    assert not folder.exists() and proxy_folders(isolated_home) == []


def test_doctor_shows_the_network_mode_and_where_each_domain_comes_from(tmp_path, isolated_home):
    claude = Path.home() / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    (claude / "settings.json").write_text(json.dumps({"sandbox": {"network": {"allowedDomains": ["pypi.org", "*"]}}}))
    result = run_agent(["doctor", "--no-request", "-c", 'sandbox.network.denied_domains=["evil.test"]'], cwd=tmp_path)
    lines = [line for line in result.stdout.splitlines() if "network" in line]
    mode = "allow-list" if MECHANISMS else "off"
    assert any(mode in line for line in lines), result.stdout
    assert any(f"allowed pypi.org ({claude}/settings.json allowedDomains)" in line for line in lines)
    assert any("denied  evil.test (-c" in line for line in lines)
    assert any("'*'" in line and "ignored" in line for line in lines)  # a bad entry: a warning, not an error
    assert "off (network_access" not in result.stdout


def test_network_access_true_stays_everything(tmp_path, isolated_home):
    result = run_agent(
        ["doctor", "--no-request", "-c", 'sandbox.network.allowed_domains=["pypi.org"]', "-c", "network_access=true"],
        cwd=tmp_path,
    )
    assert "all (network_access = true)" in result.stdout
