"""Tasks on this machine: a pool of threads, each waiting on one `agent exec` process at a time.

The work is in the processes (one per task, sharing nothing with each other or with the batch);
the threads only feed them and read their events. Ctrl+C (or SIGTERM, SIGHUP) stops the batch:
no task starts any more, each running one is interrupted as `agent exec` is by Ctrl+C and
recorded as ``interrupted``; a second one kills what is left at once.
"""

from __future__ import annotations

import os
import signal
import socket
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any

from agent_cli.batch.exec_run import signal_group
from agent_cli.batch.progress import Progress
from agent_cli.batch.results import TaskResult, task_folder
from agent_cli.batch.runner import Assignment, Hooks, Settings, run_task

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class Stop:
    """The batch's stop: set by the first stop signal; the second kills the running processes."""

    def __init__(self, progress: Progress) -> None:
        self.event = threading.Event()
        self.signal = signal.SIGINT
        self.progress = progress
        self.pids: set[int] = set()
        self.lock = threading.RLock()  # the stop signal handler may say something while the main thread does

    def is_set(self) -> bool:
        return self.event.is_set()

    def request(self, sig: int) -> None:
        if self.event.is_set():
            self.progress.say("stopping now: killing the running tasks")
            with self.lock:
                for pid in self.pids:
                    signal_group(pid, signal.SIGKILL)
            return
        self.signal = sig
        self.event.set()
        self.progress.say("stopping: interrupting the running tasks (again to kill them)")

    def track(self, pid: int) -> None:
        with self.lock:
            self.pids.add(pid)


class handle_stop_signals:
    """While the batch runs, the stop signals go to ``stop`` (restored after)."""

    def __init__(self, stop: Stop | Callable[[int], None]) -> None:
        self.request = stop.request if isinstance(stop, Stop) else stop
        self.saved: dict[int, Any] = {}

    def __enter__(self) -> None:
        for sig in STOP_SIGNALS:
            previous = signal.getsignal(sig)
            if sig != signal.SIGINT and previous == signal.SIG_IGN:
                continue  # `nohup agent batch …`: asked to be ignored
            self.saved[sig] = previous
            signal.signal(sig, lambda number, _frame: self.request(number))

    def __exit__(self, *_exc: object) -> None:
        for sig, previous in self.saved.items():
            signal.signal(sig, previous)


def run_local(
    assignments: list[Assignment], settings: Settings, out: Path, workers: int, progress: Progress, stop: Stop
) -> Iterator[TaskResult]:
    """Run the tasks, ``workers`` at a time; yields each result as its task ends."""
    host = socket.gethostname()

    def one(assignment: Assignment) -> TaskResult | None:
        if stop.is_set():
            return None  # never started: a rerun runs it
        task_id = assignment.task.id
        progress.started(task_id)
        hooks = Hooks(
            should_stop=stop.is_set, on_usage=lambda usage: progress.usage(task_id, usage), on_start=stop.track
        )
        return run_task(assignment, settings, task_folder(out, task_id), hooks, node=host)

    with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="batch-task") as pool:
        futures: list[Future[TaskResult | None]] = [pool.submit(one, assignment) for assignment in assignments]
        for future in as_completed(futures):
            result = future.result()
            if result is not None:
                yield result


def default_workers() -> int:
    """As many tasks as cores (at least 2: a task mostly waits for the model), at most 8 (a
    provider's rate limit is the usual ceiling; --workers raises it)."""
    return min(8, max(2, os.cpu_count() or 1))
