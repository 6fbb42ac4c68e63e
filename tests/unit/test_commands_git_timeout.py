"""A git query that hangs (a lock, a slow filesystem) ends with a clear error, not a stuck command."""

import os
import stat

import pytest

from agent_cli.commands import git
from agent_cli.commands.errors import InputError


async def test_a_hung_git_times_out_and_is_killed(tmp_path, monkeypatch):
    fake = tmp_path / "bin" / "git"
    fake.parent.mkdir()
    fake.write_text(f"#!/bin/sh\necho $$ > {tmp_path}/pid\nexec sleep 30\n")
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", f"{fake.parent}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(git, "GIT_TIMEOUT_S", 0.5)
    with pytest.raises(InputError, match="did not finish within 0.5 s"):
        await git.git(tmp_path, "status")
    pid = int((tmp_path / "pid").read_text())
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
