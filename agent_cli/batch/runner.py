"""One task, start to end, on the machine it runs on (this one, or a Ray node): the same code.

1. The repository: the path as it is, or a clone (repos.py).
2. What an earlier, unfinished run of the task left (its worktree and branch) goes; anything else
   of that name is refused rather than overwritten.
3. `agent exec --json --worktree BATCH-ID` makes the worktree and runs the agent there, as a user's
   run would (its sandbox, approvals, trust and set-up command). The batch holds the worktree's
   lock while it runs, so exec keeps it at the end for what follows.
4. The patch (everything since the base commit), then the task's verifier, if it has one.
5. A worktree with no change goes with its branch; a changed one stays, and the result names it.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent_cli.batch.exec_run import ExecOutcome, ShouldStop, run_exec
from agent_cli.batch.patch import patch_of
from agent_cli.batch.repos import checkout_for, resolve_base
from agent_cli.batch.results import (
    ERROR,
    EVENTS,
    FAILED,
    INTERRUPTED,
    PATCH,
    STDERR,
    SUCCEEDED,
    TASKS,
    TIMED_OUT,
    VERIFIER_LOG,
    TaskResult,
)
from agent_cli.batch.tasks import Task
from agent_cli.batch.verifier import verify
from agent_cli.paths import agent_home
from agent_cli.worktrees.git import run
from agent_cli.worktrees.staleness import aside_warning, set_aside, stale_reason
from agent_cli.worktrees.store import (
    BRANCH_PREFIX,
    GitError,
    Worktree,
    branch_exists,
    find,
    hold,
    in_use,
    release,
    remove,
    repository_folder,
    repository_of,
)

USAGE_ERROR = 2  # `agent exec` refused its input: nothing ran
RELEASE_WAIT_S = 30.0  # an interrupted earlier run may still be stopping in the worktree


@dataclass(frozen=True)
class Settings:
    """What every task of the batch shares (sent to Ray nodes as it is)."""

    batch: str
    exec_options: tuple[str, ...] = ()  # the global options, passed to each `agent exec`
    sandbox: str | None = None  # for the verifier, as for the agent's commands
    timeout: float | None = None  # a task's own `timeout` wins


@dataclass(frozen=True)
class Assignment:
    """One run of one task: where, from what, and whether an earlier run of it may be cleared."""

    task: Task
    repo: str  # a path or a URL
    is_url: bool
    base: str | None  # a commit (the driver resolved it), a ref, or None for HEAD
    start_over: bool
    bundle: Callable[[], bytes] | None = field(default=None, compare=False)  # for a node without the repo


@dataclass
class Hooks:
    """What the pool hears while a task runs (for the progress display, and Ctrl+C)."""

    should_stop: ShouldStop = lambda: False
    on_usage: Callable[[dict[str, int]], None] | None = None
    on_start: Callable[[int], None] | None = None


def worktree_name(batch: str, task_id: str) -> str:
    """``BATCH-ID`` (the branch is ``agent/BATCH-ID``), shortened with a hash past 64 characters."""
    name = f"{batch}-{task_id}"
    if len(name) <= 64:
        return name
    return f"{name[:57]}-{hashlib.sha256(name.encode()).hexdigest()[:6]}"


def run_task(
    assignment: Assignment, settings: Settings, folder: Path, hooks: Hooks, node: str | None = None
) -> TaskResult:
    """Run the task; its files go to ``folder`` (DIR/tasks/ID here, a temporary one on a node)."""
    started = time.monotonic()
    task = assignment.task
    folder.mkdir(parents=True, exist_ok=True)
    for name in (EVENTS, STDERR, PATCH, VERIFIER_LOG):  # an earlier, unfinished run's
        (folder / name).unlink(missing_ok=True)
    result = TaskResult(
        id=task.id, status=ERROR, node=node or socket.gethostname(), model=task.model, metadata=task.metadata
    )
    try:
        run_in_worktree(assignment, settings, folder, hooks, result)
    except (GitError, OSError, ValueError) as exc:
        result.status, result.error = ERROR, str(exc)
    result.duration_s = round(time.monotonic() - started, 3)
    return result


def run_in_worktree(assignment: Assignment, settings: Settings, folder: Path, hooks: Hooks, result: TaskResult) -> None:
    task = assignment.task
    home = agent_home()
    checkout = checkout_for(assignment.repo, home, assignment.is_url, assignment.bundle, assignment.base)
    base = resolve_base(checkout, assignment.base)
    result.base = base
    repository = repository_of(checkout)
    name = worktree_name(settings.batch, task.id)
    if (warning := clear_leftovers(home, repository.main, name, assignment.start_over)) is not None:
        result.warnings.append(warning)
    placeholder = Worktree(
        name, repository_folder(home, repository.main) / name, BRANCH_PREFIX + name, base, repository.main
    )
    hold(home, placeholder)  # exec keeps the worktree at its end: the patch and the verifier need it
    try:
        outcome = run_exec(
            exec_argv(task, settings, name, checkout, base, folder),
            task.prompt,
            env=dict(os.environ),
            cwd=checkout,
            events_log=folder / EVENTS,
            stderr_log=folder / STDERR,
            timeout=task.timeout or settings.timeout,
            should_stop=hooks.should_stop,
            on_usage=hooks.on_usage,
            on_start=hooks.on_start,
        )
    finally:
        release(home, placeholder)
    take_outcome(result, outcome, folder)
    result.events = f"{TASKS}/{task.id}/{EVENTS}"
    worktree = find(home, repository.main, name)
    if worktree is None or not worktree.exists:
        return
    patch = patch_of(worktree.path, worktree.base)
    if patch:
        (folder / PATCH).write_text(patch, encoding="utf-8", errors="surrogateescape")
        result.patch = f"{TASKS}/{task.id}/{PATCH}"
    if task.tests and result.status in (SUCCEEDED, FAILED, TIMED_OUT):
        check_with_tests(result, task, worktree.path, folder, hooks, settings)
    if patch:
        result.branch, result.worktree = worktree.branch, str(worktree.path)
    else:
        remove(home, worktree, force=True)  # nothing to keep: as `agent exec --worktree` leaves it


def exec_argv(task: Task, settings: Settings, name: str, checkout: Path, base: str, folder: Path) -> list[str]:
    argv = [
        sys.executable,
        "-m",
        "agent_cli",
        "exec",
        "--json",
        "--worktree",
        name,
        "--base",
        base,
        "-C",
        str(checkout),
    ]
    argv += settings.exec_options
    if task.model:
        argv += ["-m", task.model]
    if task.output_schema is not None:
        schema = folder / "output-schema.json"
        schema.write_text(json.dumps(task.output_schema), encoding="utf-8")
        argv += ["--output-schema", str(schema)]
    if task.setup:  # run by exec first, as `[worktree] setup` is: sandboxed, and the model sees it ran
        argv += ["-c", f"worktree.setup={json.dumps(task.setup)}"]
    return [*argv, "-"]  # the prompt on stdin


def take_outcome(result: TaskResult, outcome: ExecOutcome, folder: Path) -> None:
    result.exit_code = outcome.exit_code
    result.session_id = outcome.session_id
    result.final_message = outcome.final_message
    result.usage = dict(outcome.usage)
    code = outcome.exit_code
    if outcome.stopped == "interrupted":
        result.status, result.error = INTERRUPTED, "interrupted (Ctrl+C); a rerun starts it over"
    elif outcome.stopped == "timed_out":
        result.status, result.error = TIMED_OUT, "the task's time ran out; agent exec was interrupted"
    elif code == 0:
        result.status = SUCCEEDED
    elif code is not None and code < 0:
        result.status, result.error = ERROR, f"agent exec was killed by signal {-code}"
    elif code == USAGE_ERROR:
        result.status, result.error = ERROR, last_line(folder / STDERR) or "agent exec refused its input"
    else:
        result.status, result.error = FAILED, outcome.failure or last_line(folder / STDERR)


def check_with_tests(
    result: TaskResult, task: Task, worktree: Path, folder: Path, hooks: Hooks, settings: Settings
) -> None:
    checked = verify(
        task.tests, worktree, folder / VERIFIER_LOG, task.verifier_timeout, hooks.should_stop, settings.sandbox
    )
    if checked.stopped == "interrupted":
        result.status, result.error = INTERRUPTED, "interrupted (Ctrl+C) in the verifier; a rerun starts it over"
        return
    result.reward = checked.reward
    if checked.exit_code != 0 and result.status == SUCCEEDED:
        why = "timed out" if checked.stopped else f"exit {checked.exit_code}"
        result.status, result.error = FAILED, f"the verifier failed ({why}): {TASKS}/{task.id}/{VERIFIER_LOG}"


def last_line(path: Path) -> str | None:
    try:
        lines = [line for line in path.read_text(encoding="utf-8", errors="replace").splitlines() if line.strip()]
    except OSError:
        return None
    return lines[-1] if lines else None


def clear_leftovers(home: Path, main: Path, name: str, start_over: bool) -> str | None:
    """Make room for a fresh worktree NAME: a stale one (its repository cloned again) is set aside,
    what an unfinished run of this task left goes (``start_over``), and a worktree or branch of that
    name from anything else is refused. Returns a warning for the result, or None."""
    found = find(home, main, name)
    branch = BRANCH_PREFIX + name
    reason = stale_reason(found, repository_of(main)) if found is not None and found.exists else None
    if found is not None and reason is not None:
        wait_until_free(home, found)
        return aside_warning(found, reason, set_aside(home, found))
    if found is None and not branch_exists(main, branch):
        return None
    if not start_over:
        raise GitError(
            f"worktree or branch {branch} exists already (an earlier batch of the same --name?); "
            f"remove it (agent worktree rm {name} --force; git branch -D {branch}) or choose another --name"
        )
    if found is not None:
        wait_until_free(home, found)
        remove(home, found, force=True)
    if branch_exists(main, branch):
        run(main, "branch", "-D", "--quiet", branch)
    return None


def wait_until_free(home: Path, worktree: Worktree) -> None:
    deadline = time.monotonic() + RELEASE_WAIT_S
    while in_use(home, worktree):
        if time.monotonic() > deadline:
            raise GitError(f"worktree {worktree.name} is still in use by another agent; it was not started over")
        time.sleep(0.1)
