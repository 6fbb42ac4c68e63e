"""The warm exec server and the sandbox, under every mechanism this machine has: a command the
model runs in the sandbox must neither hand a run to the user's warm server (which runs outside
every sandbox) nor take the server's place and receive the user's next run (its environment, keys
and descriptors). And a warm run never uses SDK code that changed on disk since the server loaded it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import uuid
from pathlib import Path

import openai
import pytest

from agent_cli.sandbox import policy
from agent_cli.sandbox.policy import SandboxPolicy, working_mechanisms
from tests.conftest import agent_process_env
from tests.fake_server import Reply, ToolCall
from tests.processes import alive
from tests.waiting import wait_for
from tests.warm_helpers import EXEC, Warm

MECHANISMS = list(working_mechanisms())
pytestmark = pytest.mark.skipif(not MECHANISMS, reason="no sandbox mechanism here (no working bubblewrap, no Landlock)")
SANDBOXED = ("-s", "workspace-write")


@pytest.fixture
def warm(server, tmp_path):
    warm = Warm(server, tmp_path)
    yield warm
    warm.stop()


@pytest.fixture
def outside():
    """A folder outside the workspace and the temp dirs: not writable in the sandbox."""
    path = Path(tempfile.mkdtemp(prefix="agent-outside-", dir="/var/tmp")).resolve()
    yield path
    shutil.rmtree(path, ignore_errors=True)


def run_what_it_says(request) -> Reply:
    """The model: a user message ``RUN: COMMAND`` gets a shell call of COMMAND, a tool result an
    answer with the result in it."""
    last = request.body["messages"][-1]
    if last["role"] == "user" and "RUN: " in str(last["content"]):
        return Reply(tool_calls=[ToolCall("shell", {"command": str(last["content"]).split("RUN: ", 1)[1]})])
    if last["role"] == "tool":
        return Reply(text="ran: " + str(last["content"])[-300:])
    return Reply(text="answered")


def tool_results(server) -> list[str]:
    return [str(m["content"]) for r in server.requests for m in r.body["messages"][-1:] if m["role"] == "tool"]


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_nested_exec_keeps_the_sandbox_it_came_from(warm, server, outside, mechanism):
    """The model's sandboxed command runs `agent exec --yolo` to write outside the sandbox: the
    nested run must not reach the warm server; it runs where it was started, in the sandbox (with
    network on here, so the nested run reaches the model and tries)."""
    warm.warmed(server)
    server.fallback = run_what_it_says
    target = outside / "escaped"
    # the agent's commands get no keys: any will do for the fake model
    nested = " ".join(
        ["OPENAI_API_KEY=x", sys.executable, "-m", "agent_cli", *EXEC, "--yolo", f"'RUN: touch {target}'"]
    )
    env = {"AGENT_SANDBOX_MECHANISM": mechanism}
    direct = warm.run(*SANDBOXED, f"RUN: touch {target}", env=env)
    assert direct.returncode == 0, direct.stderr
    assert not target.exists()  # the sandbox holds for the command itself
    result = warm.run(*SANDBOXED, "-c", "network_access=true", f"RUN: {nested}", env=env)
    assert result.returncode == 0, result.stderr
    assert not target.exists(), "a nested agent exec ran outside the sandbox"
    # the nested run did run, inside the sandbox: its own `touch` was refused there
    assert any(("Read-only file system" in out or "Permission denied" in out) for out in tool_results(server)[1:]), (
        "\n".join(tool_results(server))
    )


ATTACKER = """
import glob, json, os, socket, sys
report = sys.argv[1]
def done(**found):
    with open(report + ".tmp", "w") as f:
        json.dump(found, f)
    os.rename(report + ".tmp", report)
folder = os.path.join(os.environ["XDG_RUNTIME_DIR"], "agent-cli-%d" % os.getuid())
try:
    [path] = glob.glob(folder + "/warm-*.sock")
    os.unlink(path)
    listener = socket.socket(socket.AF_UNIX)
    listener.bind(path)
    listener.listen()
except (OSError, ValueError) as exc:
    done(took_over=False, error=repr(exc))
    sys.exit(0)
open(report + ".listening", "w").close()
listener.settimeout(60)
try:
    conn, _ = listener.accept()
except OSError as exc:
    done(took_over=True, connected=False, error=repr(exc))
    sys.exit(0)
conn.settimeout(3)
data, fds = b"", []
try:
    while True:
        chunk, got, _, _ = socket.recv_fds(conn, 1 << 20, 8)
        data, fds = data + chunk, fds + got
        if not chunk:
            break
except OSError:
    pass
wrote = False
for fd in fds:
    try:
        os.close(os.open("planted-by-the-sandbox", os.O_WRONLY | os.O_CREAT, 0o644, dir_fd=fd))
        wrote = True
    except OSError:
        pass
conn.close()
done(took_over=True, connected=True, data=data.decode(errors="replace"), fds=len(fds), wrote=wrote)
"""


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_sandboxed_command_cannot_take_the_servers_place(warm, server, outside, mechanism):
    """The model's command removes the warm socket and listens on its path while the user runs
    `agent exec` in another terminal: the user's run must send it nothing (no key, no descriptor)."""
    daemon = warm.warmed(server)
    server.fallback = run_what_it_says
    (warm.work / "attacker.py").write_text(ATTACKER)
    report = warm.work / "report.json"
    attack = warm.start(*SANDBOXED, f"RUN: python3 attacker.py {report}", env={"AGENT_SANDBOX_MECHANISM": mechanism})
    try:
        wait_for(lambda: report.exists() or Path(f"{report}.listening").exists(), within=60, what="the attacker")
        secret = f"sk-ant-{uuid.uuid4().hex}"
        user = warm.run("RUN: echo user-run", env={"ANTHROPIC_API_KEY": secret}, cwd=outside)
        assert user.returncode == 0, user.stderr
        assert "user-run" in user.stdout
        out, err = attack.communicate(timeout=120)
        assert attack.returncode == 0, err
    finally:
        attack.kill()
    found = json.loads(report.read_text())
    assert secret not in found.get("data", ""), "the user's key reached a sandboxed process"
    assert not found.get("fds"), "the user's descriptors reached a sandboxed process"
    assert not (outside / "planted-by-the-sandbox").exists()
    assert not found["took_over"], found
    assert warm.servers() == [daemon]  # the user's server is still the one


# --- each end checks the other, also where the sandbox could reach the socket (a sandbox without
# the mask and without covered host sockets, as the Landlock launcher is where it cannot make a
# mount namespace)


def unmasked_sandbox(argv: list[str], warm: Warm, mechanism: str, monkeypatch) -> subprocess.Popen:
    monkeypatch.setattr(policy, "masked_dirs", lambda: [], raising=False)  # also where there is none to turn off
    monkeypatch.setattr(policy, "host_sockets", lambda *_: [])  # the socket, in /tmp here, is not covered either
    sandbox = SandboxPolicy.create("workspace-write", warm.work)
    return subprocess.Popen(
        policy.confine(argv, sandbox, mechanism), cwd=warm.work, env=warm.env, stdout=subprocess.PIPE, text=True
    )  # stderr: the test's, to see why it failed


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_launcher_sends_nothing_to_a_sandboxed_server(warm, server, outside, mechanism, monkeypatch):
    warm.warmed(server)
    (warm.work / "attacker.py").write_text(ATTACKER)
    report = warm.work / "report.json"
    attacker = unmasked_sandbox([sys.executable, "attacker.py", str(report)], warm, mechanism, monkeypatch)
    try:
        wait_for(lambda: report.exists() or Path(f"{report}.listening").exists(), within=60, what="the attacker")
        assert not report.exists(), report.read_text()  # it took the socket's place
        secret = f"sk-ant-{uuid.uuid4().hex}"
        server.script(Reply(text="served"))
        user = warm.run("hi", env={"ANTHROPIC_API_KEY": secret}, cwd=outside)
        assert user.returncode == 0 and user.stdout.strip() == "served", user.stderr  # cold, here
        attacker.communicate(timeout=60)
    finally:
        attacker.kill()
    found = json.loads(report.read_text())
    assert found["connected"] and found["data"] == "" and found["fds"] == 0, found
    assert not (outside / "planted-by-the-sandbox").exists()


SANDBOXED_LAUNCHER = """
import json, os, socket, sys
from agent_cli.warm.protocol import GO, Messages, install_fingerprint, limits, send_message, socket_path
sock = socket.socket(socket.AF_UNIX)
sock.connect(str(socket_path()))
request = {
    "fingerprint": install_fingerprint(), "limits": limits(), "nice": os.getpriority(os.PRIO_PROCESS, 0),
    "argv": json.loads(sys.argv[1]), "argv0": "agent", "env": dict(os.environ, OPENAI_API_KEY="x"), "umask": 18,
    "ignored": [], "blocked": [],
}
fds = [0, 1, 2, os.open(".", os.O_RDONLY | os.O_DIRECTORY)]
messages = Messages(sock)
try:
    send_message(sock, request, fds)  # everything at once, whatever the server asks first
    reply, _ = messages.next()
    if reply and reply.get("ready"):
        send_message(sock, request, fds)
        reply, _ = messages.next()
    if reply and "pid" in reply:
        sock.sendall(GO)
        reply, _ = messages.next()
except OSError as exc:  # the server hung up
    reply = None
print(json.dumps(reply))
"""


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_server_serves_no_sandboxed_launcher(warm, server, outside, mechanism, monkeypatch):
    """A launcher of its own making, in the sandbox, reaches the socket and asks for a run: the
    server must not start it (it would run outside the sandbox)."""
    warm.warmed(server)
    server.fallback = run_what_it_says
    target = outside / "escaped"
    argv = json.dumps([*EXEC, "--yolo", f"RUN: touch {target}"])
    (warm.work / "launcher.py").write_text(SANDBOXED_LAUNCHER)
    launcher = unmasked_sandbox([sys.executable, "launcher.py", argv], warm, mechanism, monkeypatch)
    out, _ = launcher.communicate(timeout=120)
    assert launcher.returncode == 0
    assert out.strip() == "null"  # no answer at all
    assert not target.exists(), "a sandboxed launcher had a run started outside the sandbox"


PROBE = [sys.executable, "-c", "from agent_cli.socket_peer import confinement; print(confinement())"]


@pytest.mark.skipif(not shutil.which("setpriv"), reason="no setpriv (util-linux) here")
@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("network", [False, True])
def test_a_sandboxed_process_never_looks_like_the_user(tmp_path, mechanism, network, monkeypatch):
    """What both ends compare (agent_cli/socket_peer.py) tells a sandboxed process from the user's,
    also where the user's session has no_new_privs already and the Landlock launcher can make no
    mount namespace: then only its seccomp filter (a mark, with the network allowed) shows."""
    monkeypatch.setattr(policy, "landlock_mounts_work", lambda: False)
    monkeypatch.setattr(policy, "masked_dirs", lambda: [], raising=False)
    sandbox = SandboxPolicy.create("workspace-write", tmp_path, network_access=network)
    env = agent_process_env()

    def confinement(argv: list[str]) -> str:
        done = subprocess.run(["setpriv", "--no-new-privs", *argv], env=env, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        return done.stdout

    assert confinement(policy.confine(PROBE, sandbox, mechanism)) != confinement(PROBE)


def test_an_sdk_patched_in_place_is_not_run_warm(warm, server, tmp_path):
    """docs/exec.md: a changed SDK runs cold. The server had loaded the old file; the run after the
    patch must send the patched version (openai puts it in a header), and the server is replaced."""
    sdk = tmp_path / "sdk"
    shutil.copytree(Path(openai.__file__).parent, sdk / "openai", ignore=shutil.ignore_patterns("__pycache__"))
    warm.env["PYTHONPATH"] = f"{sdk}{os.pathsep}{warm.env['PYTHONPATH']}"
    old = warm.warmed(server)
    version = sdk / "openai" / "_version.py"
    version.write_text(version.read_text().replace(openai.__version__, "9.9.9"))  # the same file, rewritten
    server.script(Reply(text="patched"))
    result = warm.run("hi")
    assert result.returncode == 0 and result.stdout.strip() == "patched", result.stderr
    assert server.requests[-1].headers.get("x-stainless-package-version") == "9.9.9"
    wait_for(lambda: not alive(old), within=15, what="the stale server to quit")
    wait_for(lambda: warm.servers() and warm.servers()[0] != old, within=60, what="a server of the patched SDK")
