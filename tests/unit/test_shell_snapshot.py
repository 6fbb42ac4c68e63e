"""The login shell runs once per session; each command loads its snapshot (issue 16, part 6)."""

from __future__ import annotations

import dataclasses
import functools
import os
import shutil
import time
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.tools.base import ToolContext
from agent_cli.tools.shell import ShellTool
from agent_cli.tools.shell_env import EnvPolicy, command_env
from agent_cli.tools.shell_snapshot import ShellSnapshot

PROFILE = """\
echo run >> "$HOME/profile-runs"
echo "pyenv: cannot rehash: $HOME/.pyenv/shims isn't writable" >&2
export FROM_PROFILE="set by the profile"
export DATABASE_URL="postgres://user:pass@db/app"
alias hello='echo alias works'
greet() { echo "function works: $1"; }
"""


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    home.mkdir()
    (home / ".profile").write_text(PROFILE)
    return home


def session_tools(
    home: Path, events: list, timeout_s: float = 10.0, folder: str = "snapshots"
) -> tuple[ToolContext, ShellSnapshot]:
    scrub = functools.partial(command_env, EnvPolicy())
    env = scrub({**os.environ, "HOME": str(home)})
    env.pop("BASH_ENV", None)
    snapshot = ShellSnapshot(home / folder, home, env, scrub, timeout_s=timeout_s, bash=shutil.which("bash"))
    ctx = ToolContext(cwd=home, data_dir=home / "data", env=env, emit=events.append, shell_snapshot=snapshot)
    return ctx, snapshot


async def run(ctx: ToolContext, command: str) -> str:
    return (await ShellTool().run({"command": command}, ctx)).output


async def test_the_profile_runs_once_and_every_command_gets_what_it_set(home):
    events: list = []
    ctx, snapshot = session_tools(home, events)
    outputs = [await run(ctx, 'echo "$FROM_PROFILE"; hello; greet x') for _ in range(3)]
    assert (home / "profile-runs").read_text() == "run\n"
    for output in outputs:
        assert "set by the profile\nalias works\nfunction works: x" in output
        assert "pyenv" not in output  # the profile's noise stays out of what the model reads
    assert not [e for e in events if isinstance(e, ev.Warning)]
    snapshot.close()
    assert not snapshot.path.exists()


async def test_secrets_the_profile_exports_are_scrubbed_and_nested_shells_stay_clean(home):
    ctx, snapshot = session_tools(home, [])
    nested = "bash -c 'type greet >/dev/null 2>&1 || echo clean'"
    output = await run(ctx, f'echo "db=$DATABASE_URL"; echo "env=$BASH_ENV"; {nested}')
    assert "db=\n" in output and "env=\n" in output and "clean" in output
    snapshot.close()


async def test_a_failing_snapshot_falls_back_to_a_non_login_shell_with_one_warning(home):
    (home / "read-only").write_text("a file where the snapshot's folder should be")
    events: list = []
    ctx, _ = session_tools(home, events, folder="read-only")
    first, second = await run(ctx, 'echo "profile:$FROM_PROFILE"; echo "home:$HOME"'), await run(ctx, "echo again")
    assert "profile:\n" in first and f"home:{home}" in first and "again" in second  # inherited env, no profile
    assert not (home / "profile-runs").exists()  # commands do not run the profile
    warnings = [e.message for e in events if isinstance(e, ev.Warning)]
    assert len(warnings) == 1 and "read-only" in warnings[0] and "non-login bash" in warnings[0]


async def test_a_hanging_profile_is_killed_at_the_snapshots_own_timeout(home):
    (home / ".profile").write_text('echo $$ > "$HOME/profile-pid"; sleep 60\n')
    events: list = []
    ctx, snapshot = session_tools(home, events, timeout_s=0.5)
    snapshot.start()
    assert await snapshot.ready() is None
    pid = int((home / "profile-pid").read_text())
    deadline = time.monotonic() + 5
    while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not Path(f"/proc/{pid}").exists()
    assert "longer than 0.5 s" in snapshot.take_warning() and snapshot.take_warning() is None


def test_a_login_shell_still_being_snapshotted_ends_with_the_agent(home, tmp_path):
    """The agent exits (no session close) while the profile still runs: the profile goes too."""
    import subprocess
    import sys

    (home / ".profile").write_text('echo $$ > "$HOME/profile-pid"; sleep 60\n')
    script = f"""
import functools, os, shutil, time
from pathlib import Path
from agent_cli.tools.shell_env import EnvPolicy, command_env
from agent_cli.tools.shell_snapshot import ShellSnapshot
scrub = functools.partial(command_env, EnvPolicy())
env = scrub({{**os.environ, "HOME": {str(home)!r}}})
snapshot = ShellSnapshot(Path({str(home)!r}) / "snapshots", Path({str(home)!r}), env, scrub, bash=shutil.which("bash"))
snapshot.start()
while not (Path({str(home)!r}) / "profile-pid").exists():
    time.sleep(0.05)
"""
    subprocess.run([sys.executable, "-c", script], check=True, timeout=30)
    pid = int((home / "profile-pid").read_text())
    assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


# --- a profile that takes a lock the way pyenv's rehash does (issue 27, item 11) ------------------

REHASH = """\
set -o noclobber
echo "$$" > "$HOME/.pyenv-shim" || exit 1
trap 'sleep 1.5; rm -f "$HOME/.pyenv-shim"' EXIT
echo "$$" > "$HOME/rehash-pid"
sleep 30
"""


def locking_profile(home: Path) -> None:
    """Like `eval "$(pyenv init -)"`: the profile runs a rehash that holds a lock file until its
    EXIT trap (slow here, so a premature SIGKILL shows) removes it."""
    (home / "rehash.sh").write_text(REHASH)
    (home / ".profile").write_text('bash "$HOME/rehash.sh"\n')


def wait_gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if (
            not Path(f"/proc/{pid}").exists()
            or "Z" in Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        ):
            return True
        time.sleep(0.05)
    return False


async def test_past_its_limit_the_profile_gets_sigterm_and_time_for_its_exit_trap(home):
    locking_profile(home)
    ctx, snapshot = session_tools(home, [], timeout_s=1.0)
    assert await snapshot.ready() is None
    assert wait_gone(int((home / "rehash-pid").read_text()))
    assert not (home / ".pyenv-shim").exists()
    assert "longer than 1 s" in snapshot.take_warning()


async def test_a_session_closed_mid_profile_leaves_no_lock(home):
    locking_profile(home)
    _, snapshot = session_tools(home, [])
    snapshot.start()
    deadline = time.monotonic() + 30
    while not (home / "rehash-pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    snapshot.close()
    assert wait_gone(int((home / "rehash-pid").read_text()))
    assert not (home / ".pyenv-shim").exists()


async def test_a_profiles_proxy_does_not_override_the_sandboxs(home):
    """A corporate `https_proxy` from the login profile applies to commands outside the network
    proxy; behind it (allow-list mode), the proxy's own variables win."""
    (home / ".profile").write_text("export https_proxy=http://corp:8080\nexport NO_PROXY=corp.local\n")
    ctx, _ = session_tools(home, [])
    plain = await run(ctx, 'echo "[$https_proxy] [$NO_PROXY]"')
    assert "[http://corp:8080] [corp.local]" in plain
    assert ctx.env is not None
    env = {**ctx.env, "AGENT_SANDBOX_PROXY": "1", "https_proxy": "http://127.0.0.1:3128", "NO_PROXY": "localhost"}
    proxied = await run(dataclasses.replace(ctx, env=env), 'echo "[$https_proxy] [$NO_PROXY]"')
    assert "[http://127.0.0.1:3128] [localhost]" in proxied
