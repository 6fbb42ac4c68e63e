"""One `agent exec --json` as a subprocess: its events read as they come, stopped on request.

The prompt goes on stdin (no length limit of a command line). The run is in a session of its own,
so the terminal's Ctrl+C reaches the batch only, which passes it on as SIGINT: `agent exec` stops
its turn, kills its commands and exits 130, and the events so far are kept. Ten seconds later
whatever is left of the process group is killed. If the batch itself dies, even by SIGKILL, the
run's stdout loses its reader and `agent exec` stops itself (it watches for that: hangup.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

GRACE_S = 10.0  # after SIGINT, how long `agent exec` gets to stop its turn and write its session
POLL_S = 0.1

ShouldStop = Callable[[], bool]


@dataclass
class ExecOutcome:
    exit_code: int | None
    stopped: str | None = None  # "interrupted" or "timed_out" when we stopped it
    session_id: str | None = None
    final_message: str | None = None
    failure: str | None = None  # the last turn.failed / error event's message
    usage: dict[str, int] = field(default_factory=dict)
    worktree: dict[str, Any] | None = None  # what worktree.kept / worktree.removed said
    pid: int | None = None


class EventReader:
    """Reads the JSON lines of a run, writes each to the events log, keeps what a result needs."""

    def __init__(self, log: IO[bytes], on_usage: Callable[[dict[str, int]], None] | None) -> None:
        self.log = log
        self.on_usage = on_usage
        self.outcome = ExecOutcome(exit_code=None)

    def read(self, stream: IO[bytes]) -> None:
        for raw in iter(stream.readline, b""):
            self.log.write(raw)
            self.log.flush()
            with contextlib.suppress(ValueError, UnicodeDecodeError):
                event = json.loads(raw)
                if isinstance(event, dict):
                    self.take(event)

    def take(self, event: dict[str, Any]) -> None:
        kind = event.get("type")
        item: dict[str, Any] = event["item"] if isinstance(event.get("item"), dict) else {}
        if kind == "thread.started":
            self.outcome.session_id = event.get("thread_id")
        elif kind == "item.completed" and item.get("type") == "agent_message":
            self.outcome.final_message = item.get("text")
        elif kind == "turn.completed" and isinstance(event.get("usage"), dict):
            for name, value in event["usage"].items():
                if isinstance(value, int):
                    self.outcome.usage[name] = self.outcome.usage.get(name, 0) + value
            if self.on_usage is not None:
                self.on_usage(dict(self.outcome.usage))
        elif kind == "turn.failed" and isinstance(event.get("error"), dict):
            self.outcome.failure = str(event["error"].get("message", ""))
        elif kind == "error":
            self.outcome.failure = str(event.get("message", ""))
        elif kind in ("worktree.kept", "worktree.removed") and isinstance(event.get("worktree"), dict):
            self.outcome.worktree = {**event["worktree"], "removed": kind == "worktree.removed"}


def run_exec(
    argv: list[str],
    prompt: str,
    *,
    env: dict[str, str],
    cwd: Path,
    events_log: Path,
    stderr_log: Path,
    timeout: float | None,
    should_stop: ShouldStop,
    on_usage: Callable[[dict[str, int]], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> ExecOutcome:
    """Run ``argv`` (an `agent exec --json … -` command) to its end, or until ``timeout`` seconds
    pass or ``should_stop()`` says so (then it is interrupted as Ctrl+C would)."""
    with open(events_log, "wb") as log, open(stderr_log, "wb") as errors:
        process = subprocess.Popen(
            argv, cwd=cwd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=errors, start_new_session=True
        )
        if on_start is not None:
            on_start(process.pid)
        reader = EventReader(log, on_usage)
        thread = threading.Thread(target=reader.read, args=(process.stdout,), name="batch-events", daemon=True)
        thread.start()
        feed(process, prompt)
        stopped = wait(process, timeout, should_stop)
        thread.join()
    reader.outcome.exit_code = process.returncode
    reader.outcome.stopped = stopped
    reader.outcome.pid = process.pid
    return reader.outcome


def feed(process: subprocess.Popen[bytes], prompt: str) -> None:
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, OSError):  # it ended before reading (a usage error)
        process.stdin.write(prompt.encode("utf-8"))
    with contextlib.suppress(BrokenPipeError, OSError):
        process.stdin.close()


def wait(process: subprocess.Popen[bytes], timeout: float | None, should_stop: ShouldStop) -> str | None:
    """Wait for the end; on a stop or the deadline: SIGINT, then SIGKILL after GRACE_S."""
    deadline = time.monotonic() + timeout if timeout else None
    stopped: str | None = None
    kill_at: float | None = None
    while True:
        try:
            process.wait(timeout=POLL_S)
            return stopped
        except subprocess.TimeoutExpired:
            pass
        now = time.monotonic()
        if stopped is None and (should_stop() or (deadline is not None and now >= deadline)):
            stopped = "timed_out" if deadline is not None and now >= deadline else "interrupted"
            signal_group(process.pid, signal.SIGINT)
            kill_at = now + GRACE_S
        elif kill_at is not None and now >= kill_at:
            signal_group(process.pid, signal.SIGKILL)
            kill_at = None


def signal_group(pid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, sig)
