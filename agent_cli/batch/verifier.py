"""A task's own tests after the agent's run (Terminal-Bench's ``tests/test.sh``): in the task's
worktree, under the same sandbox as the agent's commands, with the environment commands get (no
provider key). The tests are written to a folder of their own under the agent's home, outside the
worktree and every sandbox's writable roots, so neither what the agent left in the worktree nor
another task's agent running meanwhile can replace them; the exit status is the reward (0: 1.0,
anything else: 0.0).
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from agent_cli.batch.exec_run import POLL_S, ShouldStop, signal_group
from agent_cli.paths import agent_home
from agent_cli.sandbox.policy import WORKSPACE_WRITE, SandboxPolicy, command_argv
from agent_cli.tools.shell_env import EnvPolicy, command_env

VERIFIER_TIMEOUT_S = 600.0  # Terminal-Bench's default


@dataclass(frozen=True)
class Checked:
    exit_code: int | None  # None: it did not end (timed out, or stopped)
    stopped: str | None = None  # "timed_out" or "interrupted"

    @property
    def reward(self) -> float:
        return 1.0 if self.exit_code == 0 else 0.0


def tests_home() -> Path:
    """Where a verifier's tests are written: under the agent's home, which no sandbox may write
    (``/tmp`` would do for this task's own sandbox, but every other running task may write there,
    and rewrite these tests)."""
    folder = agent_home() / "batch" / "verify"
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    return folder


def sandboxed(argv: list[str], worktree: Path, mode: str | None) -> list[str]:
    return command_argv(argv, SandboxPolicy.create(mode or WORKSPACE_WRITE, worktree))


def run_command(
    argv: list[str], worktree: Path, log: Path, timeout: float, should_stop: ShouldStop, mode: str | None
) -> Checked:
    """``argv`` sandboxed in ``worktree``, its output to ``log``, stopped at ``timeout`` or on request."""
    env = command_env(EnvPolicy())
    with open(log, "ab") as out:
        process = subprocess.Popen(
            sandboxed(argv, worktree, mode),
            cwd=worktree,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while True:
            try:
                return Checked(process.wait(timeout=POLL_S))
            except subprocess.TimeoutExpired:
                pass
            if should_stop() or time.monotonic() >= deadline:
                signal_group(process.pid, 9)
                process.wait()
                return Checked(None, "interrupted" if should_stop() else "timed_out")


def verify(
    tests: dict[str, bytes], worktree: Path, log: Path, timeout: float | None, should_stop: ShouldStop, mode: str | None
) -> Checked:
    """Write the tests to a folder of their own and run ``bash test.sh`` there, from the worktree."""
    with tempfile.TemporaryDirectory(prefix="tests-", dir=tests_home()) as folder:
        for name, data in tests.items():
            path = Path(folder) / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(data)
        os.chmod(Path(folder) / "test.sh", 0o755)
        return run_command(
            ["bash", str(Path(folder) / "test.sh")], worktree, log, timeout or VERIFIER_TIMEOUT_S, should_stop, mode
        )
