"""What a running batch shows: a line per task that starts and ends, and, on a terminal, one status
line kept at the bottom (done / running / failed, tokens and cost so far, an ETA), redrawn twice a
second. Not on a terminal (a log, CI), the same facts come as plain lines, one per event."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TextIO

from agent_cli.batch.results import SUCCEEDED, TaskResult
from agent_cli.terminal_text import terminal_safe

REDRAW_S = 0.5
CLEAR_LINE = "\r\x1b[K"

Cost = Callable[[dict[str, int]], float | None]  # a task's usage -> USD, None when no price is known


def tokens_of(usage: dict[str, int]) -> int:
    return int(usage.get("input_tokens", 0)) + int(usage.get("output_tokens", 0))


def short_duration(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def short_count(number: int) -> str:
    return f"{number / 1000:.1f}k" if number >= 1000 else str(number)


class Progress:
    def __init__(self, total: int, workers: int, out: TextIO, live: bool, cost: Cost) -> None:
        self.total, self.workers, self.out, self.live, self.cost = total, workers, out, live, cost
        self.done = self.failed = 0
        self.running: dict[str, dict[str, int]] = {}  # id -> usage so far
        self.finished_usage: list[dict[str, int]] = []
        self.durations: list[float] = []
        self.started_at = time.monotonic()
        self.lock = threading.RLock()  # the stop signal handler may say something while the main thread does
        self.stopping = threading.Event()
        self.thread: threading.Thread | None = None
        if live:
            self.thread = threading.Thread(target=self._redraw, name="batch-progress", daemon=True)
            self.thread.start()

    def say(self, text: str) -> None:
        with self.lock:
            prefix = CLEAR_LINE if self.live else ""
            self.out.write(prefix + terminal_safe(text) + "\n")
            if self.live:
                self.out.write(self.status())
            self.out.flush()

    def started(self, task_id: str, node: str | None = None, attempt: int = 1) -> None:
        with self.lock:
            self.running[task_id] = {}
        where = f" on {node}" if node else ""
        again = f" (attempt {attempt})" if attempt > 1 else ""
        self.say(f"started {task_id}{where}{again}")

    def usage(self, task_id: str, usage: dict[str, int]) -> None:
        with self.lock:
            if task_id in self.running:
                self.running[task_id] = usage

    def finished(self, result: TaskResult) -> None:
        with self.lock:
            self.running.pop(result.id, None)
            self.done += 1
            self.failed += result.status not in (SUCCEEDED,)
            self.finished_usage.append(result.usage)
            self.durations.append(result.duration_s)
        mark = "ok" if result.status == SUCCEEDED else result.status
        reward = f", reward {result.reward:g}" if result.reward is not None else ""
        why = f": {result.error}" if result.error and result.status != SUCCEEDED else ""
        line = f"{mark:<11} {result.id} in {result.duration_s:.1f}s{reward}{why}"
        with self.lock:
            summary = self.summary()
        self.say(line if self.live else f"{line}  [{summary}]")
        for warning in result.warnings:
            self.say(f"warning: {result.id}: {warning}")

    def counts(self) -> str:
        return f"{self.done}/{self.total} done, {self.failed} failed, {len(self.running)} running"

    def summary(self) -> str:
        """Done / running / failed, tokens and cost so far, the ETA (the lock is held)."""
        usages = self.finished_usage + list(self.running.values())
        tokens = sum(tokens_of(usage) for usage in usages)
        costs = [self.cost(usage) for usage in usages if usage]
        money = f" · ${sum(c for c in costs if c is not None):.2f}" if costs and None not in costs else ""
        return f"{self.counts()} · {short_count(tokens)} tokens{money} · ETA {self.eta()}"

    def status(self) -> str:
        """The bottom line on a terminal (the lock is held)."""
        return f"batch: {self.summary()}"

    def eta(self) -> str:
        left = self.total - self.done
        if left <= 0:
            return "0s"
        if not self.durations:
            return "?"
        mean = sum(self.durations) / len(self.durations)
        return short_duration(mean * left / max(1, self.workers))

    def _redraw(self) -> None:
        while not self.stopping.wait(REDRAW_S):
            with self.lock:
                self.out.write(CLEAR_LINE + self.status())
                self.out.flush()

    def close(self) -> None:
        self.stopping.set()
        if self.thread is not None:
            self.thread.join()
            with self.lock:
                self.out.write(CLEAR_LINE)
                self.out.flush()
