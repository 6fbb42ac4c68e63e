"""The user's login-shell environment, taken once per session and loaded by every command.

Running each command with ``bash -lc`` re-runs the whole login profile every time (about 0.1 s),
and inside the sandbox, profile tools that write (pyenv, nvm, conda) print errors into every
output the model reads. Instead the profile runs once, in the background with its own timeout;
its exported variables, aliases, functions and shell options go into a file that each command's
non-login bash loads through ``BASH_ENV``. If that fails or takes too long, commands run a
non-login bash in the inherited environment (paying the slow profile once, not per command) and
the user is warned once.

The agent never kills a profile midway while it may still finish: profile tools take locks that
only their EXIT traps release (pyenv's rehash lock stalls every later login shell of the user for
a minute when left behind). Stopping it early sends SIGTERM and waits for it up to the snapshot's
own limit; only past that limit does SIGKILL follow, after a grace period.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import re
import shlex
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping
from pathlib import Path

from agent_cli.sandbox.network import PROXIED_MARK, PROXY_VARIABLES
from agent_cli.tools.process import signal_group

SNAPSHOT_TIMEOUT_S = 10.0
TERM_GRACE_S = 2.0  # past the limit: between SIGTERM and SIGKILL, for the profile's EXIT traps
# Run by `bash -lc` after the profile: what the profile left behind, in files next to "$1".
DUMP_SCRIPT = 'env -0 > "$1.env" && { shopt -p; alias -p; declare -f; } > "$1.shell"'
NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Set by bash itself, read-only, or meaningful only to the shell that took the snapshot.
SKIPPED_NAMES = {"PWD", "OLDPWD", "SHLVL", "_", "SHELLOPTS", "BASHOPTS", "BASH_ENV"}
READ_ONLY_SHOPTS = ("login_shell", "restricted_shell")

Scrub = Callable[[Mapping[str, str]], dict[str, str]]
_running: dict[subprocess.Popen[bytes], float] = {}  # login shells being snapshotted -> their deadline


class ShellSnapshot:
    """One session's snapshot. :meth:`start` takes it on a thread; :meth:`ready` waits for it."""

    def __init__(
        self,
        directory: Path,
        cwd: Path,
        env: Mapping[str, str] | None,
        scrub: Scrub,
        timeout_s: float = SNAPSHOT_TIMEOUT_S,
        bash: str | None = None,
    ):
        self.directory = directory
        self.cwd = cwd
        self.env = dict(os.environ if env is None else env)  # what commands start from
        self.scrub = scrub  # the session's secret scrubbing, applied to what the profile exports
        self.timeout_s = timeout_s
        self.bash = bash
        self.path: Path | None = None  # the file commands load; None until taken (or when it failed)
        self.error: str | None = None
        self._warned = False
        self._done = threading.Event()
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._closed = False

    def start(self) -> None:
        """Take the snapshot in the background (once; later calls do nothing)."""
        if self._thread is None:
            self._thread = threading.Thread(target=self._take, name="shell-snapshot", daemon=True)
            self._thread.start()

    async def ready(self) -> Path | None:
        """The snapshot file, waiting for it if it is still being taken; None if it failed."""
        self.start()
        if not self._done.is_set():
            await asyncio.to_thread(self._done.wait)  # bounded by the snapshot's own timeout
        return self.path

    def take_warning(self) -> str | None:
        """Why commands run without the login profile, the first time it is asked; then None."""
        if self.error is None or self._warned:
            return None
        self._warned = True
        return f"could not snapshot the login shell ({self.error}); commands run a non-login bash in the agent's environment"

    def close(self) -> None:
        """Stop a snapshot still being taken and delete the file."""
        self._closed = True
        if (process := self._process) is not None and process.poll() is None:
            # Not on the caller's (event loop's) time; not a daemon either, so exit waits for it.
            deadline = _running.get(process, 0.0)
            threading.Thread(target=stop_group, args=(process, deadline), name="shell-snapshot-stop").start()
        if self.path is not None:
            self.path.unlink(missing_ok=True)

    # --- taking it ----------------------------------------------------------------------

    def _take(self) -> None:
        try:
            path = self._write(self._login_environment())
            if self._closed:  # the session ended while the file was written
                path.unlink(missing_ok=True)
            else:
                self.path = path
        except (OSError, subprocess.SubprocessError, ValueError) as exc:
            self.error = str(exc) or type(exc).__name__
        finally:
            self._done.set()

    def _login_environment(self) -> tuple[dict[str, str], str]:
        """The variables and the shell definitions a login shell ends up with."""
        if self.bash is None:
            raise OSError("bash was not found")
        self.directory.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(dir=self.directory) as scratch:
            base = Path(scratch) / "dump"
            process = subprocess.Popen(
                [self.bash, "-lc", DUMP_SCRIPT, "agent-shell-snapshot", str(base)],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                cwd=self.cwd,
                env=self.env,
                start_new_session=True,  # its own group: killed as one
            )
            self._process = process
            _running[process] = time.monotonic() + self.timeout_s
            try:
                code = process.wait(timeout=self.timeout_s)
            except subprocess.TimeoutExpired:
                stop_group(process, 0.0)  # its limit passed
                raise OSError(f"the login shell took longer than {self.timeout_s:g} s") from None
            finally:
                _running.pop(process, None)
            if self._closed:
                raise OSError("the session ended")
            if code != 0:
                raise OSError(f"the login shell exited with code {code}")
            raw = Path(f"{base}.env").read_bytes()
            shell = Path(f"{base}.shell").read_text(encoding="utf-8", errors="replace")
        variables = dict(entry.split("=", 1) for entry in os.fsdecode(raw).split("\0") if "=" in entry)
        return variables, shell

    def _write(self, login: tuple[dict[str, str], str]) -> Path:
        variables, shell = login
        fd, name = tempfile.mkstemp(prefix="snapshot-", suffix=".sh", dir=self.directory)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(render(variables, shell, self.env, self.scrub))
        return Path(name)


@atexit.register
def _stop_running() -> None:
    """A login shell still being snapshotted when the agent exits goes with it (its own session
    would otherwise keep it running)."""
    for process, deadline in list(_running.items()):
        stop_group(process, deadline)


def stop_group(process: subprocess.Popen[bytes], deadline: float) -> None:
    """SIGTERM, so profile tools release their locks in their EXIT traps; then wait for the shell
    until ``deadline`` (its limit, on the monotonic clock) or at least a grace period, and only
    then SIGKILL whatever is left."""
    signal_group(process.pid, signal.SIGTERM)
    until = max(deadline, time.monotonic() + TERM_GRACE_S)
    while time.monotonic() < until:  # the whole group: the lock is held by the profile's children
        if process.poll() is not None and not _group_alive(process.pid):
            return
        time.sleep(0.05)
    signal_group(process.pid, signal.SIGKILL)
    process.wait()


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except (ProcessLookupError, PermissionError):
        return False
    return True


def render(login: Mapping[str, str], shell: str, base: Mapping[str, str], scrub: Scrub) -> str:
    """The snapshot script: shell options, aliases and functions, then the variables the profile
    set or changed (secrets scrubbed as for any command; a proxy variable only for commands that
    do not go through the sandbox's proxy), then ``BASH_ENV`` as it was, so nested bash scripts the
    command runs do not load the snapshot again."""
    lines = ["# agent-cli: the login shell's environment, loaded through BASH_ENV"]
    lines += [line for line in shell.splitlines() if not (line.startswith("shopt") and line.endswith(READ_ONLY_SHOPTS))]
    lines.append("shopt -s expand_aliases")
    for name, value in sorted(scrub(login).items()):
        if NAME.match(name) and name not in SKIPPED_NAMES and base.get(name) != value:
            export = f"export {name}={shlex.quote(value)}"
            # behind the network proxy, the proxy's variables win over the profile's own
            lines.append(f'[ -n "${{{PROXIED_MARK}-}}" ] || {export}' if name.upper() in PROXY_VARIABLES else export)
    user_bash_env = base.get("BASH_ENV")
    lines.append(f"export BASH_ENV={shlex.quote(user_bash_env)}" if user_bash_env else "unset BASH_ENV")
    return "\n".join(lines) + "\n"
