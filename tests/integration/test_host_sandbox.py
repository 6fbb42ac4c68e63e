"""The per-user host (agent_cli/remote/host.py) and the sandbox, under every mechanism this machine
has: a command the model runs in a sandbox can neither reach the host's socket (where the user's
sessions are driven) nor remove or replace it; and where a sandbox could reach it (one without
the mask), the host answers no sandboxed peer, and the user's client sends nothing to a sandboxed
process that took the socket's place. Controls show the same connection works from outside."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from agent_cli.sandbox import policy
from agent_cli.sandbox.policy import SandboxPolicy, working_mechanisms
from tests.conftest import agent_process_env, git_init, run_agent
from tests.fake_server import Reply, ToolCall
from tests.host_helpers import end_host, host_env, host_pid, host_socket
from tests.processes import alive
from tests.waiting import wait_for

MECHANISMS = list(working_mechanisms())
pytestmark = [
    pytest.mark.timeout(180),
    pytest.mark.skipif(not MECHANISMS, reason="no sandbox mechanism here (no working bubblewrap, no Landlock)"),
]
MODEL = ["--provider", "openai-chat", "-m", "test-model"]

# Reach the socket, remove it, listen in its place: what each attempt came to, as JSON.
PROBE = """
import json, os, socket, sys
path, found = sys.argv[1], {}
sock = socket.socket(socket.AF_UNIX)
try:
    sock.connect(path)
    sock.sendall(b"GET / HTTP/1.1\\r\\nHost: localhost\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
                 b"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n")
    found["connect"] = sock.recv(200).split(b"\\r\\n")[0].decode()
except OSError as exc:
    found["connect"] = type(exc).__name__
for attempt, act in (("remove", lambda: os.unlink(path + ".lock")), ("listen", lambda: socket.socket(socket.AF_UNIX).bind(path + ".x"))):
    try:
        act()
        found[attempt] = "done"
    except OSError as exc:
        found[attempt] = type(exc).__name__
print(json.dumps(found))
"""

# Take the socket's place and report what a client sends (it should send nothing).
ATTACKER = """
import json, os, socket, sys
path, report = sys.argv[1], sys.argv[2]
os.unlink(path)
server = socket.socket(socket.AF_UNIX)
server.bind(path)
server.listen(1)
open(report + ".listening", "w").close()
server.settimeout(60)
client, _ = server.accept()
client.settimeout(3)
data = b""
try:
    while chunk := client.recv(65536):
        data += chunk
except OSError:
    pass
json.dump({"data": data.decode(errors="replace")}, open(report, "w"))
"""


@pytest.fixture
def repo(tmp_path) -> Path:
    return git_init(tmp_path / "repo")


@pytest.fixture
def env(server, tmp_path, monkeypatch):
    env = host_env(server, tmp_path)
    monkeypatch.setenv("XDG_RUNTIME_DIR", env["XDG_RUNTIME_DIR"])  # the folder the sandbox masks, seen from here
    yield env
    end_host(env)


def start_host(env: dict[str, str], repo: Path) -> int:
    """The per-user host, started on demand by `agent --bg` (a session that has answered)."""
    started = run_agent(["--bg", "--no-worktree", *MODEL, "hello"], cwd=repo, env=env)
    assert started.returncode == 0, started.stderr
    pid = host_pid(env)
    assert pid is not None
    return pid


def probe_outside(env: dict[str, str], repo: Path) -> dict[str, str]:
    (repo / "probe.py").write_text(PROBE)
    done = subprocess.run(
        [sys.executable, "probe.py", str(host_socket(env))],
        cwd=repo,
        env=agent_process_env(**env),
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_sandboxed_command_cannot_reach_remove_or_replace_the_hosts_socket(server, repo, env, mechanism):
    server.script(Reply(text="hello back"))
    start_host(env, repo)
    outside = probe_outside(env, repo)
    assert outside["connect"] == "HTTP/1.1 101 Switching Protocols"  # the control: from outside it answers
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": f"python3 probe.py {host_socket(env)}"})]), Reply(text="done")
    )
    ran = run_agent(
        ["exec", "--no-daemon", *MODEL, "-s", "workspace-write", "probe the host"],
        cwd=repo,
        env={**env, "AGENT_SANDBOX_MECHANISM": mechanism},
    )
    assert ran.returncode == 0, ran.stderr
    output = next(str(m["content"]) for r in server.requests for m in r.body["messages"] if m["role"] == "tool")
    inside = json.loads(output[output.index("{") : output.rindex("}") + 1])
    assert inside["connect"] == "FileNotFoundError", inside  # an empty read-only folder there
    assert inside["remove"] != "done" and inside["listen"] != "done", inside
    assert probe_outside(env, repo)["connect"] == "HTTP/1.1 101 Switching Protocols"  # still the user's host


def unmasked_sandbox(argv: list[str], cwd: Path, env: dict[str, str], mechanism: str, monkeypatch) -> subprocess.Popen:
    """``argv`` in a sandbox without the mask or the sockets' covers (as where the Landlock launcher
    can make no mount namespace): only the checks of both ends stand between it and the host."""
    monkeypatch.setattr(policy, "masked_dirs", lambda: [])
    monkeypatch.setattr(policy, "_hidden", lambda sandbox, masked: [])
    sandbox = SandboxPolicy.create("workspace-write", cwd)
    return subprocess.Popen(
        policy.confine(argv, sandbox, mechanism),
        cwd=cwd,
        env=agent_process_env(**env),
        stdout=subprocess.PIPE,
        text=True,
    )


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_without_the_mask_the_host_answers_no_sandboxed_command(server, repo, env, mechanism, monkeypatch):
    server.script(Reply(text="hello back"))
    start_host(env, repo)
    (repo / "probe.py").write_text(PROBE)
    probe = unmasked_sandbox([sys.executable, "probe.py", str(host_socket(env))], repo, env, mechanism, monkeypatch)
    out, _ = probe.communicate(timeout=60)
    assert json.loads(out)["connect"] == "HTTP/1.1 403 Forbidden"


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_user_sends_nothing_to_a_sandboxed_process_in_the_hosts_place(server, repo, env, mechanism, monkeypatch):
    server.script(Reply(text="hello back"))
    host = start_host(env, repo)
    (repo / "attacker.py").write_text(ATTACKER)
    report = repo / "report.json"
    attacker = unmasked_sandbox(
        [sys.executable, "attacker.py", str(host_socket(env)), str(report)], repo, env, mechanism, monkeypatch
    )
    try:
        wait_for(lambda: Path(f"{report}.listening").exists() or attacker.poll() is not None, 60, "the attacker")
        assert attacker.poll() is None, "the sandboxed attacker could not take the socket's place"
        secret = f"secret-prompt-{uuid.uuid4().hex}"
        user = run_agent(["--bg", "--no-worktree", *MODEL, secret], cwd=repo, env=env)
        assert user.returncode == 2
        assert "nothing was sent to it" in user.stderr
        attacker.communicate(timeout=60)
    finally:
        attacker.kill()
    assert json.loads(report.read_text())["data"] == ""  # not even the handshake
    assert secret not in str([r.body for r in server.requests])
    assert alive(host)  # the user's host still runs (its socket was taken; it ends with the test)
    subprocess.run(["kill", str(host)], check=True)
    wait_for(lambda: not alive(host), 30, "the user's host to end")
