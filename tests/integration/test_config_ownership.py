"""Configuration is read only from the user's own folders (issue 45): another user's
`.agent/config.toml`, `.claude/settings.json`, `.mcp.json`, `AGENTS.md` or `.git` in a folder
above the working one (a shared `/tmp`, a 0777 folder, another user's folder) never applies, not
even with `--trust`; the walk stops at the user's home. A real second user (made with useradd)
plants the files; the test skips when it cannot make one (not root)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_cli.config import load_config
from agent_cli.context.project_doc import find_git_root, repository_root
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply

EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model", "--trust"]


@pytest.fixture(scope="module")
def other_user() -> Iterator[tuple[int, int]]:
    """A second local user, (uid, gid), removed afterwards."""
    if os.geteuid() != 0 or shutil.which("useradd") is None or shutil.which("setpriv") is None:
        pytest.skip("needs root, useradd and setpriv to make a second user")
    name = f"agentcli{os.getpid() % 100000}"
    subprocess.run(["useradd", "--no-create-home", "--shell", "/bin/sh", "--user-group", name], check=True)
    try:
        import pwd

        entry = pwd.getpwnam(name)
        yield entry.pw_uid, entry.pw_gid
    finally:
        subprocess.run(["userdel", name], check=False)


def as_user(user: tuple[int, int], files: dict[str, str], folder: Path) -> None:
    """Write ``files`` (relative path -> text; a path ending in `/` is a folder) into ``folder`` as ``user``."""
    uid, gid = user
    writer = (
        "import json, pathlib, sys\n"
        "root = pathlib.Path(sys.argv[1])\n"
        "for name, text in json.loads(sys.argv[2]).items():\n"
        "    path = root / name\n"
        "    path.parent.mkdir(parents=True, exist_ok=True)\n"
        "    path.mkdir() if name.endswith('/') else path.write_text(text)\n"
    )
    command = [sys.executable, "-c", writer, str(folder), json.dumps(files)]
    subprocess.run(["setpriv", f"--reuid={uid}", f"--regid={gid}", "--clear-groups", *command], check=True)


@pytest.fixture
def shared_tmp() -> Iterator[Path]:
    """A folder like /tmp (root's, 1777) that both users reach."""
    folder = Path(tempfile.mkdtemp(prefix="agent-shared-", dir="/tmp"))
    folder.chmod(0o1777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def plant(user: tuple[int, int], folder: Path, markers: Path, with_git: bool) -> None:
    """The other user's configuration in ``folder``: every kind of file that could run code or
    reach the model, each leaving a marker in ``markers`` when it runs."""
    config = f'[[hooks.SessionStart]]\ncommand = "touch {markers}/config-hook"\n'
    claude = {"hooks": {"SessionStart": [{"hooks": [{"type": "command", "command": f"touch {markers}/claude-hook"}]}]}}
    server = f"import pathlib; pathlib.Path({str(markers / 'mcp-server')!r}).write_text('ran')"
    mcp = {"mcpServers": {"planted": {"command": sys.executable, "args": ["-c", server]}}}
    files = {
        ".agent/config.toml": config,
        ".claude/settings.json": json.dumps(claude),
        ".mcp.json": json.dumps(mcp),
        "AGENTS.md": "PLANTED-INSTRUCTIONS\n",
    }
    as_user(user, {**files, **({".git/": ""} if with_git else {})}, folder)


@pytest.mark.parametrize("with_git", [False, True], ids=["no-repository", "planted-git"])
def test_another_users_config_in_a_shared_folder_above_never_applies(
    server, other_user, shared_tmp, tmp_path, isolated_home, with_git
):
    markers = shared_tmp / "markers"
    markers.mkdir(mode=0o777)
    markers.chmod(0o777)
    plant(other_user, shared_tmp, markers, with_git)
    work = shared_tmp / "x"
    work.mkdir(mode=0o755)  # the user's own folder, in the shared one
    server.script(Reply(text="done"))
    result = run_agent([*EXEC, "hi"], cwd=work, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    assert sorted(path.name for path in markers.iterdir()) == []
    assert "PLANTED-INSTRUCTIONS" not in server.requests[-1].raw.decode()
    assert find_git_root(work) is None and repository_root(work) == work
    assert load_config(work).sources == ()


def test_the_same_files_of_the_users_own_apply(server, shared_tmp, tmp_path, isolated_home):
    """The control: written by the user in their own folder, the planted files do apply."""
    work = git_init(tmp_path / "own")
    markers = tmp_path / "markers"
    markers.mkdir()
    (work / ".agent").mkdir()
    (work / ".agent" / "config.toml").write_text(f'[[hooks.SessionStart]]\ncommand = "touch {markers}/config-hook"\n')
    (work / "AGENTS.md").write_text("OWN-INSTRUCTIONS\n")
    server.script(Reply(text="done"))
    result = run_agent([*EXEC, "hi"], cwd=work, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    assert (markers / "config-hook").exists()
    assert "OWN-INSTRUCTIONS" in server.requests[-1].raw.decode()


def test_a_working_folder_others_can_write_has_no_repository_files(other_user, shared_tmp, isolated_home):
    """Started in the shared folder itself: nothing planted there is read."""
    plant(other_user, shared_tmp, shared_tmp, with_git=False)
    assert repository_root(shared_tmp) is None
    assert load_config(shared_tmp).sources == ()


def test_the_walk_stops_where_another_user_owns_the_folder(other_user, tmp_path, isolated_home):
    """A folder of the user's inside another user's (0755, not writable by us): the owner boundary."""
    theirs = tmp_path / "theirs"
    theirs.mkdir()
    (theirs / ".agent").mkdir()
    (theirs / ".agent" / "config.toml").write_text('model = "planted"\n')
    (theirs / ".git").mkdir()
    os.chown(theirs, *other_user)
    os.chown(theirs / ".agent", *other_user)
    os.chown(theirs / ".agent" / "config.toml", *other_user)
    mine = theirs / "mine"
    mine.mkdir()
    assert find_git_root(mine) is None
    assert load_config(mine).model != "planted"


def test_the_walk_stops_at_the_home_folder(tmp_path, isolated_home, monkeypatch):
    above = tmp_path / "above"
    (above / ".agent").mkdir(parents=True)
    (above / ".agent" / "config.toml").write_text('model = "from-above-home"\n')
    home = above / "home"
    project = home / "project"
    project.mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    assert load_config(project).model != "from-above-home"
    (home / ".agent").mkdir()
    (home / ".agent" / "config.toml").write_text('model = "from-home"\n')
    assert load_config(project).model == "from-home"  # the home folder itself is the user's own


def test_a_config_folder_others_can_write_is_not_read(tmp_path, isolated_home):
    repo = git_init(tmp_path / "repo")
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text('model = "world-writable"\n')
    (repo / ".agent").chmod(0o777)
    assert load_config(repo).model != "world-writable"
    (repo / ".agent").chmod(0o755)
    assert load_config(repo).model == "world-writable"
