"""The sandbox: policies, real confinement by each mechanism this machine has, env scrubbing."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.config import ConfigError, load_config
from agent_cli.items import ToolCall
from agent_cli.sandbox import landlock
from agent_cli.sandbox.policy import (
    MECHANISM_ENV,
    SandboxPolicy,
    confine,
    detect_mechanism,
    sandbox_mechanism,
    start_warning,
    working_mechanisms,
)
from agent_cli.tools.apply_patch import ApplyPatchTool
from agent_cli.tools.base import ToolContext
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.shell_env import EnvPolicy, command_env

MECHANISMS = list(working_mechanisms())
needs_mechanism = pytest.mark.skipif(
    not MECHANISMS, reason="no sandbox mechanism here (no working bubblewrap, no Landlock)"
)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    (ws / ".git").mkdir(parents=True)
    (ws / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    outside = tmp_path / "outside"
    outside.mkdir()
    return ws, outside


def run_confined(argv: list[str], policy: SandboxPolicy, mechanism: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(confine(argv, policy, mechanism), cwd=cwd, capture_output=True, text=True, timeout=30)


def sh(command: str) -> list[str]:
    return ["bash", "-c", command]


# --- policy ---------------------------------------------------------------------------------


def test_workspace_write_roots_are_cwd_extra_roots_and_temp(tmp_path):
    extra = tmp_path / "extra"
    policy = SandboxPolicy.create("workspace-write", tmp_path / "ws", [extra])
    assert policy.writable_roots[:2] == ((tmp_path / "ws").resolve(), extra.resolve())
    assert Path("/tmp").resolve() in policy.writable_roots
    assert not policy.network_access


def test_read_only_has_no_writable_root_and_full_access_has_network(tmp_path):
    assert SandboxPolicy.create("read-only", tmp_path).writable_roots == ()
    full = SandboxPolicy.create("danger-full-access", tmp_path)
    assert full.network_access and not full.confines
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        SandboxPolicy.create("yolo", tmp_path)


def test_write_denial_by_resolved_path(workspace):
    ws, outside = workspace
    policy = SandboxPolicy.create("workspace-write", ws, include_temp=False)
    assert policy.write_denial(ws / "src" / "a.py") is None
    assert "outside the sandbox's writable roots" in policy.write_denial(outside / "a.py")
    assert "stays read-only" in policy.write_denial(ws.resolve() / ".git" / "config")
    assert "stays read-only" in policy.write_denial(ws.resolve() / ".agent" / "config.toml")
    assert "read-only" in SandboxPolicy.create("read-only", ws).write_denial(ws / "a.py")
    assert SandboxPolicy.create("danger-full-access", ws).write_denial(outside / "a.py") is None


def test_confine_leaves_argv_alone_without_a_sandbox(tmp_path):
    assert confine(["true"], None) == ["true"]
    assert confine(["true"], SandboxPolicy.create("danger-full-access", tmp_path)) == ["true"]
    assert confine(["true"], SandboxPolicy.create("read-only", tmp_path), "none") == ["true"]


def test_bubblewrap_argv_binds_roots_writable_and_git_read_only(workspace):
    ws, _ = workspace
    argv = confine(["true"], SandboxPolicy.create("workspace-write", ws, include_temp=False), "bubblewrap")
    text = " ".join(argv)
    assert f"--bind {ws.resolve()} {ws.resolve()}" in text
    assert f"--ro-bind {ws.resolve()}/.git {ws.resolve()}/.git" in text
    assert "--unshare-net" in argv and argv[-2:] == ["--", "true"]
    networked = confine(["true"], SandboxPolicy.create("workspace-write", ws, network_access=True), "bubblewrap")
    assert "--unshare-net" not in networked


def test_mechanism_can_be_forced_and_is_reported(monkeypatch):
    detect_mechanism.cache_clear()
    try:
        monkeypatch.setenv(MECHANISM_ENV, "none")
        assert detect_mechanism().name == "none"
        assert sandbox_mechanism().startswith("none")
        assert "cannot be enforced" in start_warning("workspace-write", interactive=True)
        assert "asked before each command" in start_warning("workspace-write", interactive=True)
        assert "without confinement" in start_warning("read-only", interactive=False)
        assert start_warning("danger-full-access", interactive=True) is None
    finally:
        detect_mechanism.cache_clear()
    monkeypatch.delenv(MECHANISM_ENV)
    if MECHANISMS:
        assert sandbox_mechanism().split()[0] == MECHANISMS[0]
        assert start_warning("workspace-write", interactive=True) is None


def test_landlock_abi_is_reported_when_present():
    abi = landlock.abi_version()
    assert abi >= 0
    if abi:
        assert landlock.write_rights(abi) & landlock.WRITE_FILE


# --- real confinement, per mechanism ----------------------------------------------------------


@needs_mechanism
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_workspace_write_allows_inside_and_refuses_outside(workspace, mechanism):
    ws, outside = workspace
    policy = SandboxPolicy.create("workspace-write", ws, include_temp=False)
    done = run_confined(sh("echo in > inside.txt && echo out > ../outside/x.txt"), policy, mechanism, ws)
    assert (ws / "inside.txt").read_text() == "in\n"
    assert not (outside / "x.txt").exists()
    assert done.returncode != 0
    assert "Read-only file system" in done.stderr or "Permission denied" in done.stderr
    also = run_confined(
        sh("echo x > /dev/null && mkdir -p a/b && mv inside.txt a/b/ && echo ok"), policy, mechanism, ws
    )
    assert also.stdout == "ok\n", also.stderr


@pytest.mark.skipif("bubblewrap" not in MECHANISMS, reason="bubblewrap does not work on this machine")
def test_bubblewrap_keeps_git_read_only(workspace):
    ws, _ = workspace
    policy = SandboxPolicy.create("workspace-write", ws, include_temp=False)
    done = run_confined(sh("echo evil > .git/HEAD"), policy, "bubblewrap", ws)
    assert done.returncode != 0
    assert (ws / ".git" / "HEAD").read_text() == "ref: refs/heads/main\n"


@needs_mechanism
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_read_only_refuses_every_write(workspace, mechanism):
    ws, _ = workspace
    done = run_confined(sh("echo x > a.txt"), SandboxPolicy.create("read-only", ws), mechanism, ws)
    assert done.returncode != 0 and not (ws / "a.txt").exists()


CONNECT = "import socket,sys; socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3); print('connected')"


@needs_mechanism
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_network_is_cut_unless_enabled(workspace, listener, mechanism):
    ws, _ = workspace
    port = str(listener.getsockname()[1])
    closed = SandboxPolicy.create("workspace-write", ws, include_temp=False)
    done = run_confined([sys.executable, "-c", CONNECT, port], closed, mechanism, ws)
    assert done.returncode != 0 and "connected" not in done.stdout
    with pytest.raises(TimeoutError):
        listener.accept()  # nothing got through
    opened = SandboxPolicy.create("workspace-write", ws, network_access=True, include_temp=False)
    done = run_confined([sys.executable, "-c", CONNECT, port], opened, mechanism, ws)
    assert done.stdout == "connected\n", done.stderr
    listener.accept()[0].close()


@pytest.mark.skipif("landlock" not in MECHANISMS, reason="no Landlock on this kernel")
def test_landlock_launcher_also_blocks_udp_and_refuses_a_bad_policy(workspace):
    ws, _ = workspace
    policy = SandboxPolicy.create("workspace-write", ws, include_temp=False)
    udp = "import socket; socket.socket(socket.AF_INET, socket.SOCK_DGRAM); print('udp')"
    done = run_confined([sys.executable, "-c", udp], policy, "landlock", ws)
    assert done.returncode != 0 and "udp" not in done.stdout
    unix = "import socket; socket.socket(socket.AF_UNIX); print('unix ok')"
    assert run_confined([sys.executable, "-c", unix], policy, "landlock", ws).stdout == "unix ok\n"
    launcher = confine(["true"], policy, "landlock")
    bad = subprocess.run([*launcher[:4], "{not json", "--", "touch", str(ws / "ran")], capture_output=True, text=True)
    assert bad.returncode == 126 and "command not run" in bad.stderr
    assert not (ws / "ran").exists()


# --- apply_patch obeys the same roots ---------------------------------------------------------


async def patch(ws: Path, text: str, policy: SandboxPolicy):
    ctx = ToolContext(cwd=ws, data_dir=ws.parent / "data", sandbox=policy, writable_roots=tuple(policy.writable_roots))
    call = ToolCall("c1", "apply_patch", json.dumps({"patch": text}))
    return await ToolRegistry([ApplyPatchTool()]).dispatch(call, ctx)


def add_file(path: str) -> str:
    return f"*** Begin Patch\n*** Add File: {path}\n+hello\n*** End Patch\n"


async def test_apply_patch_refuses_a_symlink_escape_and_dot_dot(workspace):
    ws, outside = workspace
    (ws / "link").symlink_to(outside)
    policy = SandboxPolicy.create("workspace-write", ws, include_temp=False)
    result = await patch(ws, add_file("link/evil.txt"), policy)
    assert not result.success and "outside the sandbox's writable roots" in result.output
    result = await patch(ws, add_file("../outside/evil.txt"), policy)
    assert not result.success
    assert list(outside.iterdir()) == []
    result = await patch(ws, add_file(".git/hooks/post-commit"), policy)
    assert not result.success and "read-only" in result.output
    result = await patch(ws, add_file("src/ok.txt"), policy)
    assert result.success, result.output
    assert (ws / "src" / "ok.txt").read_text() == "hello\n"


async def test_apply_patch_writes_nothing_in_read_only(workspace):
    ws, _ = workspace
    result = await patch(ws, add_file("a.txt"), SandboxPolicy.create("read-only", ws))
    assert not result.success and "the sandbox is read-only" in result.output
    assert not (ws / "a.txt").exists()


# --- environment ------------------------------------------------------------------------------

ENVIRON = {
    "PATH": "/usr/bin",
    "HOME": "/home/u",
    "GITHUB_TOKEN": "t",
    "AWS_SECRET_ACCESS_KEY": "k",
    "MY_SECRET": "s",
    "DB_PASSWORD_FILE": "p",
    "OPENAI_API_KEY": "o",
    "MY_LLM_CRED": "c",
    "EDITOR": "vim",
}


def test_secrets_are_dropped_by_default():
    env = command_env(EnvPolicy(), ENVIRON, secret_names=["MY_LLM_CRED"])
    assert env == {"PATH": "/usr/bin", "HOME": "/home/u", "EDITOR": "vim"}


def test_env_policy_keep_exclude_set_and_inherit_none():
    policy = EnvPolicy.from_table({"keep": ["github_token"], "exclude": ["EDIT*"], "set": {"CI": "1", "DEBUG": True}})
    env = command_env(policy, ENVIRON)
    assert env["GITHUB_TOKEN"] == "t" and "EDITOR" not in env and env["CI"] == "1" and env["DEBUG"] == "true"
    assert "AWS_SECRET_ACCESS_KEY" not in env
    bare = command_env(EnvPolicy.from_table({"inherit": "none"}), ENVIRON)
    assert bare == {"PATH": "/usr/bin", "HOME": "/home/u"}


@pytest.mark.parametrize(
    "table, message",
    [
        ({"inherit": "some"}, "inherit"),
        ({"exclude": "X"}, "exclude"),
        ({"sets": {}}, "unknown key"),
        ({"set": []}, "set"),
    ],
)
def test_bad_env_policy_is_a_config_error(tmp_path, isolated_home, table, message):
    lines = "\n".join(f"{k} = {json.dumps(v)}" for k, v in table.items())
    (isolated_home / "config.toml").write_text(f"[shell_environment_policy]\n{lines}\n")
    with pytest.raises(ConfigError, match=message):
        load_config(tmp_path)


def test_cli_flags_set_sandbox_and_approval(tmp_path):
    from agent_cli.arguments import build_tui_parser, session_flags

    args = build_tui_parser().parse_args(["--sandbox", "read-only", "-a", "untrusted"])
    config = load_config(tmp_path, [], session_flags(args))
    assert (config.sandbox_mode, config.approval_policy) == ("read-only", "untrusted")
    with pytest.raises(SystemExit):
        build_tui_parser().parse_args(["--sandbox", "nope"])
