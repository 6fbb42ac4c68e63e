"""Tasks on a Ray cluster: each task is a Ray task (its CPUs, its retries), spread over the nodes.

The driver (this process) checks the cluster can be reached before anything starts, ships the
repository as a git bundle for nodes that lack it, and takes each result as it comes back: its
line in DIR/results.jsonl and its files in DIR/tasks/ID, whatever node ran it. A node lost in the
middle of a task is Ray's business: the task runs again elsewhere (``--retries``), and the board
(ray_node.py) counts the attempts. Only the provider's variables go with a task (its
``runtime_env``); the nodes have their own environment, and their own ``$AGENT_HOME``.
"""

from __future__ import annotations

import logging
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

from agent_cli.batch.local_pool import Stop
from agent_cli.batch.progress import Progress
from agent_cli.batch.ray_node import Board, Bundle, run_on_node
from agent_cli.batch.repos import make_bundle
from agent_cli.batch.results import ERROR, INTERRUPTED, TaskResult, task_folder
from agent_cli.batch.runner import Assignment, Settings

PROBE_TIMEOUT_S = 5.0
WAIT_S = 0.5
STOP_GRACE_S = 30.0  # after a stop, how long running tasks get to come back as interrupted


class RayUnavailable(Exception):
    """Ray is not installed, or the cluster cannot be reached; the message says which."""


def probe(address: str) -> None:
    """A TCP connection to HOST:PORT, so an unreachable cluster fails in seconds (ray.init would
    retry for minutes). ``auto`` and ``ray://`` addresses are left to Ray."""
    if address == "auto" or "://" in address:
        return
    host, _, port = address.rpartition(":")
    if not host or not port.isdigit():
        raise RayUnavailable(f"--ray {address}: give the head node's HOST:PORT (or auto, or ray://HOST:PORT)")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=PROBE_TIMEOUT_S):
            pass
    except OSError as exc:
        raise RayUnavailable(
            f"cannot reach the Ray cluster at {address}: {exc.strerror or exc}; no task was started"
        ) from None


def connect(address: str) -> None:
    probe(address)
    try:
        import ray
    except ImportError:
        raise RayUnavailable("--ray needs Ray: pip install 'agent-cli[ray]'") from None
    try:
        ray.init(address=address, log_to_driver=False, logging_level=logging.ERROR)
    except Exception as exc:  # Ray raises ConnectionError, RuntimeError, ValueError...  # noqa: BLE001
        raise RayUnavailable(f"cannot connect to the Ray cluster at {address}: {exc}; no task was started") from None


def bundles(assignments: list[Assignment]) -> dict[str, Bundle]:
    """One bundle per local repository, in the object store once, for the nodes that lack it."""
    import ray

    return {
        repo: Bundle(ray.put(make_bundle(Path(repo)))) for repo in sorted({a.repo for a in assignments if not a.is_url})
    }


def run_ray(
    assignments: list[Assignment],
    settings: Settings,
    out: Path,
    progress: Progress,
    stop: Stop,
    env: dict[str, str],
    retries: int,
    cpus: float,
) -> Iterator[TaskResult]:
    import ray

    if not assignments:
        return
    shipped = bundles(assignments)
    board: Any = cast(Any, ray.remote(Board)).options(num_cpus=0, resources={"node:__internal_head__": 0.001}).remote()
    remote: Any = cast(Any, ray.remote(run_on_node)).options(
        num_cpus=cpus,
        max_retries=retries,
        retry_exceptions=False,
        scheduling_strategy="SPREAD",
        runtime_env={"env_vars": env},
    )
    pending: dict[Any, Assignment] = {}
    for assignment in assignments:
        shipped_with = Assignment(
            assignment.task,
            assignment.repo,
            assignment.is_url,
            assignment.base,
            assignment.start_over,
            shipped.get(assignment.repo),
        )
        pending[remote.remote(shipped_with, settings, board)] = assignment
    seen = 0
    stop_sent_at: float | None = None
    while pending:
        ready, _ = ray.wait(list(pending), num_returns=1, timeout=WAIT_S)
        news = ray.get(board.news.remote(seen))
        seen += len(news)
        for task_id, node, attempt in news:
            progress.started(task_id, node, attempt)
        if stop.is_set() and stop_sent_at is None:
            stop_sent_at = time.monotonic()
            board.stop.remote()
        for reference in ready:
            yield take(reference, pending.pop(reference), out, board)
        if stop_sent_at is not None and time.monotonic() - stop_sent_at > STOP_GRACE_S:
            for reference, assignment in list(pending.items()):
                ray.cancel(reference, force=True)
                pending.pop(reference)
                yield TaskResult(
                    id=assignment.task.id, status=INTERRUPTED, error="interrupted; it did not stop in time"
                )


def take(reference: Any, assignment: Assignment, out: Path, board: Any) -> TaskResult:
    """A finished Ray task's result, its files written into DIR; a task Ray gave up on is an error."""
    import ray
    from ray.exceptions import RayError, TaskCancelledError

    try:
        result, files = ray.get(reference)
    except TaskCancelledError:
        return TaskResult(id=assignment.task.id, status=INTERRUPTED, error="interrupted before it started")
    except RayError as exc:
        attempts = int(ray.get(board.attempts_of.remote(assignment.task.id)))
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        return TaskResult(id=assignment.task.id, status=ERROR, attempts=attempts, error=f"Ray gave up on it: {first}")
    folder = task_folder(out, assignment.task.id)
    folder.mkdir(parents=True, exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return result
