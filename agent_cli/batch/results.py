"""DIR/results.jsonl: one line per task as it finishes, never lost to a crash.

Each line is written whole by one ``write`` on a file opened for appending, then synced: a batch
killed at any moment leaves complete lines, and at most a torn last one, which reading skips and
the next run cuts off before it appends. A task run again (a rerun after an interruption) gets a
new line; the last line of an id is its result. Beside it, ``tasks/ID/`` holds the task's files:
``events.jsonl`` (its `agent exec --json` events), ``stderr.log``, ``patch.diff``, ``verifier.log``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

RESULTS = "results.jsonl"
TASKS = "tasks"
SUCCEEDED, FAILED, TIMED_OUT, ERROR, INTERRUPTED = "succeeded", "failed", "timed_out", "error", "interrupted"
FINISHED = (SUCCEEDED, FAILED, TIMED_OUT, ERROR)  # a rerun skips these; an interrupted task starts over
EVENTS, STDERR, PATCH, VERIFIER_LOG = "events.jsonl", "stderr.log", "patch.diff", "verifier.log"


@dataclass
class TaskResult:
    """What one line of results.jsonl says about a task."""

    id: str
    status: str
    exit_code: int | None = None
    final_message: str | None = None
    branch: str | None = None
    worktree: str | None = None
    patch: str | None = None  # relative to DIR
    reward: float | None = None
    usage: dict[str, Any] = field(default_factory=dict)  # tokens, and cost_usd where the price is known
    duration_s: float = 0.0
    attempts: int = 1
    node: str | None = None
    events: str | None = None  # relative to DIR
    session_id: str | None = None
    base: str | None = None  # the commit the worktree was made from
    model: str | None = None  # the task's own model, when it has one
    error: str | None = None
    warnings: list[str] = field(default_factory=list)
    metadata: Any = None

    def to_line(self) -> str:
        data = {key: value for key, value in asdict(self).items() if value not in (None, []) or key == "exit_code"}
        return json.dumps(data, ensure_ascii=False, sort_keys=False) + "\n"


class ResultsFile:
    def __init__(self, folder: Path) -> None:
        self.path = folder / RESULTS

    def read(self) -> dict[str, dict[str, Any]]:
        """The last line of each id (a torn or foreign line is skipped)."""
        found: dict[str, dict[str, Any]] = {}
        try:
            text = self.path.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return found
        for line in text.splitlines():
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(record, dict) and isinstance(record.get("id"), str):
                found[record["id"]] = record
        return found

    def finished(self) -> dict[str, dict[str, Any]]:
        return {task_id: record for task_id, record in self.read().items() if record.get("status") in FINISHED}

    def cut_torn_tail(self) -> None:
        """A batch killed in the middle of a write may have left half a line: cut it before appending."""
        try:
            with open(self.path, "rb+") as file:
                size = file.seek(0, os.SEEK_END)
                if size == 0:
                    return
                file.seek(size - 1)
                if file.read(1) == b"\n":
                    return
                file.seek(0)
                file.truncate(file.read().rfind(b"\n") + 1)
        except FileNotFoundError:
            return

    def append(self, result: TaskResult) -> None:
        data = result.to_line().encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            written = os.write(fd, data)
            while written < len(data):  # a regular file takes it whole; a full disk may not
                written += os.write(fd, data[written:])
            os.fsync(fd)
        finally:
            os.close(fd)


def task_folder(out: Path, task_id: str) -> Path:
    return out / TASKS / task_id
