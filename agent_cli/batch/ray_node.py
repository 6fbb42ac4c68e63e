"""What runs on a Ray node: one task (runner.py, as on this machine), and the board through which
the nodes tell the driver which task started where, and learn that the batch is stopping.

Imported by the driver and, by reference, by Ray's workers; ``ray`` itself is imported only inside
the functions, so the module loads without the optional extra.
"""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from agent_cli.batch.results import EVENTS, INTERRUPTED, PATCH, STDERR, VERIFIER_LOG, TaskResult
from agent_cli.batch.runner import Assignment, Hooks, Settings, run_task

ARTIFACTS = (EVENTS, STDERR, PATCH, VERIFIER_LOG)
STOP_POLL_S = 1.0


class Board:
    """A Ray actor on the head node: attempts per task, the starts not yet shown, the stop flag."""

    def __init__(self) -> None:
        self.attempts: dict[str, int] = {}
        self.starts: list[tuple[str, str, int]] = []
        self.stopping = False

    def started(self, task_id: str, node: str) -> int:
        self.attempts[task_id] = self.attempts.get(task_id, 0) + 1
        self.starts.append((task_id, node, self.attempts[task_id]))
        return self.attempts[task_id]

    def news(self, since: int) -> list[tuple[str, str, int]]:
        return self.starts[since:]

    def attempts_of(self, task_id: str) -> int:
        return self.attempts.get(task_id, 0)

    def stop(self) -> None:
        self.stopping = True

    def should_stop(self) -> bool:
        return self.stopping


class BoardStop:
    """``should_stop`` for a task on a node: asks the board at most once a second."""

    def __init__(self, board: Any) -> None:
        self.board = board
        self.asked = 0.0
        self.answer = False

    def __call__(self) -> bool:
        import ray

        if not self.answer and time.monotonic() - self.asked >= STOP_POLL_S:
            self.asked = time.monotonic()
            try:
                self.answer = bool(ray.get(self.board.should_stop.remote(), timeout=10))
            except Exception:  # the head is gone: the driver cannot take the result anyway  # noqa: BLE001
                self.answer = True
        return self.answer


class Bundle:
    """The driver's repository as a git bundle in Ray's object store, fetched only by a node that
    lacks the repository (the reference sits in a list, so Ray does not fetch it up front)."""

    def __init__(self, reference: Any) -> None:
        self.references = [reference]

    def __call__(self) -> bytes:
        import ray

        return ray.get(self.references[0])


def run_on_node(assignment: Assignment, settings: Settings, board: Any) -> tuple[TaskResult, dict[str, bytes]]:
    """A Ray task: run one task here, and return its result and its files (the driver writes them)."""
    import ray

    node = ray.get_runtime_context().get_node_id()
    attempt = int(ray.get(board.started.remote(assignment.task.id, node)))
    if attempt > 1:  # a node died in an earlier attempt: what that attempt left is cleared here
        assignment = Assignment(
            assignment.task, assignment.repo, assignment.is_url, assignment.base, True, assignment.bundle
        )
    stop = BoardStop(board)
    if stop():  # the batch was stopped before this task's turn came: it does not start
        return TaskResult(id=assignment.task.id, status=INTERRUPTED, error="stopped before it started", node=node), {}
    with tempfile.TemporaryDirectory(prefix="agent-batch-task-") as folder:
        place = Path(folder) / assignment.task.id
        result = run_task(assignment, settings, place, Hooks(should_stop=stop), node=node)
        result.attempts = attempt
        files = {name: (place / name).read_bytes() for name in ARTIFACTS if (place / name).is_file()}
    return result, files
