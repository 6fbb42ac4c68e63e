"""Ways out of the sandbox, tried as root would (issue 27): capabilities, mounts, raw and netlink
sockets, config planted for the next session, host Unix sockets, abstract sockets and signals.
Each runs under every mechanism this machine has."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.sandbox import landlock
from agent_cli.sandbox.guard import guarded
from agent_cli.sandbox.policy import SandboxPolicy, confine, landlock_mounts_work, working_mechanisms

MECHANISMS = list(working_mechanisms())
pytestmark = pytest.mark.skipif(not MECHANISMS, reason="no sandbox mechanism here (no working bubblewrap, no Landlock)")
ROOT = os.geteuid() == 0
PROTECTED = (".git", ".agent", ".claude", ".mcp.json")


@pytest.fixture
def ws(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


def run(command: str, ws: Path, mechanism: str, include_temp: bool = False, **policy) -> subprocess.CompletedProcess:
    """``command`` in bash, confined the way the shell tool confines it (what it plants undone after)."""
    sandbox = SandboxPolicy.create("workspace-write", ws, include_temp=include_temp, **policy)
    with guarded(sandbox.workspace_roots, sandbox.writable_roots) as guard:
        argv = confine(["bash", "-c", command], sandbox, mechanism)
        done = subprocess.run(argv, cwd=ws, capture_output=True, text=True, timeout=60)
    done.stderr += "".join(f"refused: {line}\n" for line in guard.refused)
    return done


def needs_mounts(mechanism: str) -> None:
    if mechanism == "landlock" and not landlock_mounts_work():
        pytest.skip("no mount namespace for the Landlock launcher here (not root, no user namespaces)")


# --- 1. capabilities --------------------------------------------------------------------------


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_command_holds_no_capability(ws, mechanism):
    done = run("grep -E '^Cap(Eff|Prm|Amb)' /proc/self/status", ws, mechanism)
    values = dict(line.split(":\t") for line in done.stdout.splitlines())
    assert values == {"CapPrm": "0000000000000000", "CapEff": "0000000000000000", "CapAmb": "0000000000000000"}, done


@pytest.mark.skipif(not ROOT, reason="the escape needs root's capabilities")
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_root_cannot_unmount_or_remount_its_way_out(ws, mechanism):
    (ws / ".git").mkdir()
    command = (
        f"umount {ws}/.git 2>/dev/null; umount -l {ws}/.git 2>/dev/null; "
        "mount -o remount,rw,bind / 2>/dev/null; mount -o remount,rw / 2>/dev/null; "
        "echo planted > .git/config; echo planted > /var/tmp/agent-escape-$$ && echo ESCAPED; exit 0"
    )
    done = run(command, ws, mechanism)
    assert "ESCAPED" not in done.stdout
    assert not (ws / ".git" / "config").exists()


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("family", ["AF_PACKET", "AF_NETLINK", "AF_INET6"])
def test_only_unix_sockets_can_be_opened(ws, mechanism, family):
    if mechanism == "bubblewrap" and family != "AF_PACKET":
        pytest.skip("bubblewrap: these only see the sandbox's own, empty network namespace")
    code = f"import socket; socket.socket(socket.{family}, socket.SOCK_RAW if '{family}' != 'AF_INET6' else socket.SOCK_DGRAM); print('OPENED')"
    done = run(
        f'{sys.executable} -c "{code}"; {sys.executable} -c \'import socket; socket.socket(socket.AF_UNIX); print("unix")\'',
        ws,
        mechanism,
    )
    assert "OPENED" not in done.stdout and "unix" in done.stdout, done


# --- 2. config planted for the next session -------------------------------------------------------


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_protected_paths_cannot_be_created_or_changed(ws, mechanism):
    needs_mounts(mechanism)
    nested = ws / "vendor" / "lib"
    (nested / ".git").mkdir(parents=True)
    command = (
        "mkdir -p .agent && echo '[[hooks.Stop]]' > .agent/config.toml; "
        "mkdir -p .claude && echo '{}' > .claude/settings.json; "
        "echo '{\"mcpServers\": {}}' > .mcp.json; git init -q . 2>/dev/null; mkdir -p .git/hooks; "
        "echo evil > vendor/lib/.git/config; mv vendor/lib/.git vendor/lib/.gitx; "
        "echo notes > AGENTS.md; echo ok > src.txt; exit 0"
    )
    done = run(command, ws, mechanism)
    assert (ws / "AGENTS.md").read_text() == "notes\n" and (ws / "src.txt").exists(), done
    assert sorted(p.name for p in ws.iterdir()) == ["AGENTS.md", "src.txt", "vendor"], done
    assert [p.name for p in nested.iterdir()] == [".git"] and list((nested / ".git").iterdir()) == []


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_an_existing_git_cannot_be_moved_away_or_written(ws, mechanism):
    needs_mounts(mechanism)
    (ws / ".git").mkdir()
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (ws / ".mcp.json").write_text("{}\n")
    done = run("mv .git .gitx; rm -rf .git; mv .mcp.json x.json; echo '{\"x\":1}' > .mcp.json; exit 0", ws, mechanism)
    assert (ws / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n", done
    assert (ws / ".mcp.json").read_text() == "{}\n" and not (ws / ".gitx").exists() and not (ws / "x.json").exists()


# --- 3. sockets and signals -----------------------------------------------------------------------

CONNECT = "import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); print('CONNECTED')"


@pytest.fixture
def host_socket():
    """A listening filesystem socket outside the workspace and the temp dirs (like docker.sock)."""
    base = Path("/run") if os.access("/run", os.W_OK) else Path("/var/tmp")
    path = base / f"agent-test-{os.getpid()}.sock"
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.5)
    yield path, server
    server.close()
    path.unlink(missing_ok=True)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_host_unix_sockets_are_out_of_reach(ws, mechanism, host_socket):
    needs_mounts(mechanism)
    path, server = host_socket
    done = run(f'{sys.executable} -c "{CONNECT}" {path}', ws, mechanism)
    assert "CONNECTED" not in done.stdout, done
    with pytest.raises(TimeoutError):
        server.accept()
    inside = ws / "mine.sock"  # one of the workspace's own stays usable
    command = (
        f"{sys.executable} -c \"import socket; s=socket.socket(socket.AF_UNIX); s.bind('{inside}'); s.listen(); "
        f"c=socket.socket(socket.AF_UNIX); c.connect('{inside}'); print('LOCAL')\""
    )
    assert "LOCAL" in run(command, ws, mechanism).stdout


@pytest.mark.parametrize("mechanism", MECHANISMS)
@pytest.mark.parametrize("gone", ["removed", "replaced by a dangling link"])
def test_a_host_socket_that_goes_while_the_sandbox_is_built_fails_nothing(ws, mechanism, host_socket, gone):
    """The race of a busy machine, made to happen: the socket is listed when the command's argv is
    made and gone when the sandbox is built. Bubblewrap stopped there ("Can't create file at …",
    "Can't bind mount /dev/null on …") and the launcher's mount failed; the command must run."""
    needs_mounts(mechanism)
    path, server = host_socket
    sandbox = SandboxPolicy.create("workspace-write", ws, include_temp=False)
    argv = confine(["bash", "-c", "read line; echo ran $line"], sandbox, mechanism)
    assert str(path) in " ".join(argv)  # listed to be covered
    server.close()
    path.unlink()
    if gone != "removed":
        path.symlink_to(ws / "nowhere")
    done = subprocess.run(argv, cwd=ws, input="with stdin\n", capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, "ran with stdin\n"), done


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_users_tmux_server_in_tmp_runs_nothing_for_a_command(ws, mechanism, tmp_path):
    """Sockets under the writable roots were left alone, /tmp's too: `tmux run-shell CMD` from a
    sandboxed command had the user's tmux server (its socket in /tmp) run CMD outside the sandbox."""
    needs_mounts(mechanism)
    socket_path, escaped = tmp_path / "tmux.sock", Path(f"/var/tmp/agent-tmux-escape-{os.getpid()}")
    subprocess.run(["tmux", "-S", str(socket_path), "new-session", "-d", "sleep 600"], check=True, timeout=30)
    try:
        done = run(f"tmux -S {socket_path} run-shell 'touch {escaped}'", ws, mechanism, include_temp=True)
        assert not escaped.exists(), done
    finally:
        subprocess.run(["tmux", "-S", str(socket_path), "kill-server"], timeout=30)
        escaped.unlink(missing_ok=True)


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_a_socket_in_tmp_is_covered_and_the_projects_own_stays_usable(ws, mechanism, tmp_path):
    needs_mounts(mechanism)
    servers = []
    for path in (tmp_path / "elsewhere.sock", ws / "project.sock"):  # an earlier command's server in the project
        server = socket.socket(socket.AF_UNIX)
        server.bind(str(path))
        server.listen()
        servers.append(server)
    try:
        command = f'{sys.executable} -c "{CONNECT}" {tmp_path / "elsewhere.sock"}; {sys.executable} -c "{CONNECT}" {ws / "project.sock"}'
        done = run(command, ws, mechanism, include_temp=True)
        assert done.stdout.count("CONNECTED") == 1, done  # the project's, not the other
    finally:
        for server in servers:
            server.close()


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_the_agents_own_keys_and_tokens_are_out_of_reach(ws, mechanism, isolated_home):
    """Commands never inherit the key variables, yet `cat ~/.agent/auth.json` gave a command the
    keys `agent login` stored, the MCP servers' OAuth tokens and the app-server's token (with which
    a command that has the network drives the server, whose turns run outside the sandbox)."""
    needs_mounts(mechanism)
    (isolated_home / "auth.json").write_text('{"keys": {"OPENAI_API_KEY": "sk-stored-key"}}')
    (isolated_home / "app-server.token").write_text("ws-token-secret\n")
    (isolated_home / "mcp-auth").mkdir()
    (isolated_home / "mcp-auth" / "server.json").write_text('{"access_token": "oauth-secret"}')
    (isolated_home / "config.toml").write_text("# not a secret\n")
    names = ("auth.json", "app-server.token", "mcp-auth/server.json", "config.toml")
    done = run(f"cd {isolated_home} && cat {' '.join(names)}", ws, mechanism)
    for secret in ("sk-stored-key", "ws-token-secret", "oauth-secret"):
        assert secret not in done.stdout, done
    assert "# not a secret" in done.stdout  # the rest of the home reads as before


@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_abstract_sockets_and_signals_outside_are_out_of_reach(ws, mechanism):
    if mechanism == "landlock" and landlock.abi_version() < landlock.SCOPE_ABI:
        pytest.skip("Landlock ABI < 6 cannot scope abstract sockets and signals (/status says so)")
    name = f"agent-test-{os.getpid()}"
    server = socket.socket(socket.AF_UNIX)
    server.bind("\0" + name)
    server.listen()
    bystander = subprocess.Popen(["sleep", "60"])
    try:
        code = f"import socket; s=socket.socket(socket.AF_UNIX); s.connect('\\\\0{name}'); print('CONNECTED')"
        done = run(f'{sys.executable} -c "{code}"; kill -TERM {bystander.pid} && echo SIGNALLED; exit 0', ws, mechanism)
        assert "CONNECTED" not in done.stdout and "SIGNALLED" not in done.stdout, done
        assert bystander.poll() is None
    finally:
        bystander.kill()
        bystander.wait()
        server.close()


# --- /status: what the running kernel cannot enforce --------------------------------------------


@pytest.mark.parametrize("mechanism", [*MECHANISMS, "none"])
def test_status_names_what_this_kernel_cannot_enforce(monkeypatch, mechanism):
    from agent_cli.sandbox.policy import MECHANISM_ENV, detect_mechanism
    from agent_cli.sandbox.report import unenforced

    monkeypatch.setenv(MECHANISM_ENV, mechanism)
    detect_mechanism.cache_clear()
    try:
        limits = unenforced(network_access=False)
    finally:
        detect_mechanism.cache_clear()
    if mechanism == "none":
        assert limits == ["everything: commands run unconfined"]
    elif mechanism == "bubblewrap":
        assert limits == []
    else:
        assert "other processes are visible (no PID namespace)" in limits
        assert any("Landlock ABI" in limit for limit in limits) == (landlock.abi_version() < landlock.SCOPE_ABI)
        assert any(".mcp.json stay writable" in limit for limit in limits) == (not landlock_mounts_work())
