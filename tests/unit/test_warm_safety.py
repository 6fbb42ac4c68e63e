"""The warm exec server's ground rules, part by part (agent_cli/warm/, the sandbox's mask): where its
socket lives, which of its folders every sandbox masks, who each end of the socket accepts, and
when code it loaded counts as changed. End to end: tests/integration/test_warm_exec_sandbox.py."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_cli import socket_peer as peer
from agent_cli.paths import warm_server_dir
from agent_cli.sandbox.policy import masked_dirs, temp_dirs
from agent_cli.warm.loaded import LoadedCode


def test_without_a_runtime_folder_the_socket_is_not_in_a_temp_folder(monkeypatch, isolated_home):
    """/tmp is a writable root of every workspace-write sandbox."""
    monkeypatch.delenv("XDG_RUNTIME_DIR", raising=False)
    folder = warm_server_dir()
    assert folder == isolated_home / "run"
    monkeypatch.setenv("AGENT_HOME", "/home/someone/.agent")
    assert not any(warm_server_dir().is_relative_to(temp) for temp in temp_dirs())
    monkeypatch.setenv("XDG_RUNTIME_DIR", "/run/user/1000")
    assert warm_server_dir() == Path(f"/run/user/1000/agent-cli-{os.getuid()}")


def test_the_sandbox_masks_the_servers_folders_but_not_a_planted_symlink(monkeypatch, tmp_path, isolated_home):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path / "runtime"))
    ours = tmp_path / "runtime" / f"agent-cli-{os.getuid()}"
    ours.mkdir(parents=True)
    (isolated_home / "run").symlink_to(tmp_path)  # would mask the whole folder it points to
    masked = masked_dirs()  # (and /tmp's of earlier versions, where there is one)
    assert str(ours.resolve()) in masked
    assert not {str(tmp_path.resolve()), str(isolated_home.resolve() / "run")} & set(masked)


@pytest.mark.skipif(os.getuid() != 0, reason="making a folder another user's needs root")
def test_another_users_folder_is_not_masked(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(tmp_path))
    theirs = tmp_path / f"agent-cli-{os.getuid()}"
    theirs.mkdir()
    os.chown(theirs, 65534, 65534)
    assert str(theirs.resolve()) not in masked_dirs()


def test_each_end_accepts_a_process_confined_as_it_is():
    here, there = socket.socketpair(socket.AF_UNIX)
    with here, there:
        assert peer.trusted(here)


@pytest.mark.skipif(not os.path.exists("/usr/bin/setpriv"), reason="no setpriv (util-linux) here")
def test_a_process_with_no_new_privs_is_not_trusted(tmp_path):
    """As every sandboxed command has it (both mechanisms), and cannot drop."""
    path = str(tmp_path / "s")
    with socket.socket(socket.AF_UNIX) as listener:
        listener.bind(path)
        listener.listen()
        code = f"import socket,sys; s=socket.socket(socket.AF_UNIX); s.connect({path!r}); sys.stdin.read()"
        argv = ["setpriv", "--no-new-privs", sys.executable, "-c", code]
        with subprocess.Popen(argv, stdin=subprocess.PIPE, text=True) as child:
            conn, _ = listener.accept()
            with conn:
                assert not peer.trusted(conn)
            child.communicate("")


def loaded(tmp_path: Path, since: float | None = None) -> tuple[LoadedCode, Path]:
    module = tmp_path / "pkg" / "module.py"
    module.parent.mkdir(exist_ok=True)
    if not module.exists():
        module.write_text("x = 1\n")
    started = time.time() + 1 if since is None else since  # by default after the file was written
    return LoadedCode(started, [str(module)]), module


def test_a_loaded_file_written_in_place_is_a_change(tmp_path):
    code, module = loaded(tmp_path)
    assert code.unchanged()
    with open(module, "a") as file:  # the same inode: a patch applied in place
        file.write("x = 2\n")
    assert not code.unchanged()
    assert not code.unchanged()  # and stays one


@pytest.mark.parametrize("change", ["replace", "remove", "touch", "move the folder"])
def test_a_loaded_file_replaced_removed_or_touched_is_a_change(tmp_path, change):
    code, module = loaded(tmp_path)
    if change == "replace":
        (tmp_path / "new.py").write_text("x = 3\n")
        os.replace(tmp_path / "new.py", module)
    elif change == "remove":
        module.unlink()
    elif change == "touch":
        os.utime(module, (1, 1))
    else:
        module.parent.rename(tmp_path / "elsewhere")
    assert not code.unchanged()


def test_other_files_in_its_folder_are_not(tmp_path):
    """A run writes `__pycache__` and a new module may appear: not what the server loaded."""
    code, module = loaded(tmp_path)
    (module.parent / "__pycache__").mkdir()
    (module.parent / "other.py").write_text("y = 1\n")
    assert code.unchanged()


def test_a_change_while_the_server_started_counts(tmp_path):
    """Between its imports and its watch: seen by the file's change time."""
    since = time.time()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "module.py").write_text("x = 1\n")
    code, _ = loaded(tmp_path, since=since)
    assert not code.unchanged()
