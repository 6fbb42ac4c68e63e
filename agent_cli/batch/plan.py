"""Before anything runs: read the tasks, refuse what cannot run at all, say what is skipped, and
turn each task to run into an Assignment (its repository, its base commit, whether an earlier
run of it is to be cleared)."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_cli.batch.repos import is_checkout, resolve_base
from agent_cli.batch.results import ResultsFile, task_folder
from agent_cli.batch.runner import Assignment
from agent_cli.batch.task_folder import read_folders
from agent_cli.batch.tasks import Rejected, Task, TaskFileError, is_url, read_jsonl, refuse_duplicates
from agent_cli.worktrees.store import GitError, repository_of

BATCH_FILE = "batch.json"
NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,39}$")


@dataclass
class Plan:
    name: str
    tasks: list[Task]  # every task, in order
    rejected: list[Rejected]
    finished: dict[str, dict[str, Any]]  # id -> its result line, from an earlier run
    todo: list[Assignment]
    unplaced: list[tuple[Task, str]]  # tasks whose repository or base cannot be found: their error


def read_tasks(source: Path) -> tuple[list[Task], list[Rejected]]:
    if source.is_dir():
        tasks, rejected = read_folders(source)
        if not tasks and not rejected:
            raise TaskFileError(f"{source} holds no task (a folder with instruction.md, or folders of them)")
    elif source.exists():
        tasks, rejected = read_jsonl(source)
    else:
        raise TaskFileError(f"{source}: no such file or folder")
    refuse_duplicates(tasks)
    return tasks, rejected


def batch_name(out: Path, given: str | None) -> str:
    """--name, else the name an earlier run of DIR used, else DIR's own name (made fit for a branch)."""
    saved = read_saved(out).get("name")
    if given is not None:
        if not NAME_PATTERN.match(given) or ".." in given:
            raise TaskFileError(f"--name {given!r}: use up to 40 letters, digits, '.', '_' or '-'")
        if saved and saved != given:
            raise TaskFileError(f"{out} holds batch {saved!r}; resume it with --name {saved} or use another --out")
        return given
    if isinstance(saved, str) and saved:
        return saved
    stem = re.sub(r"\.{2,}", ".", re.sub(r"[^A-Za-z0-9._-]+", "-", out.resolve().name)).strip("-.")[:40]
    return stem or "batch"


def read_saved(out: Path) -> dict[str, Any]:
    try:
        data = json.loads((out / BATCH_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def save(out: Path, name: str, source: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    data = read_saved(out) or {"name": name, "tasks": str(source), "created": datetime.now().astimezone().isoformat()}
    (out / BATCH_FILE).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")


def default_repository(cwd: Path) -> str | None:
    """The checkout the batch runs in (None outside any): tasks without ``repo`` run there."""
    try:
        return str(repository_of(cwd).toplevel)
    except GitError:
        return None


def make_plan(source: Path, out: Path, name: str | None, cwd: Path) -> Plan:
    tasks, rejected = read_tasks(source)
    batch = batch_name(out, name)
    results = ResultsFile(out)
    results.cut_torn_tail()
    finished = {task_id: record for task_id, record in results.finished().items()}
    default = default_repository(cwd)
    plan = Plan(batch, tasks, rejected, {}, [], [])
    bases: dict[tuple[str, str | None], str] = {}
    for task in tasks:
        if task.id in finished:
            plan.finished[task.id] = finished[task.id]
            continue
        repo = task.repo or default
        if repo is None:
            plan.unplaced.append((task, f"{cwd} is not in a git repository, and the task names no `repo`"))
            continue
        try:
            base = task.base if is_url(repo) else resolve_local_base(repo, task.base, bases)
        except GitError as exc:
            plan.unplaced.append((task, str(exc)))
            continue
        start_over = task_folder(out, task.id).exists()  # an earlier run of this batch started it
        plan.todo.append(Assignment(task, repo, is_url(repo), base, start_over))
    return plan


def resolve_local_base(repo: str, base: str | None, known: dict[tuple[str, str | None], str]) -> str:
    """The commit a task in a local repository starts from, fixed now (HEAD may move meanwhile);
    looked up once per repository and ref."""
    if (repo, base) not in known:
        path = Path(repo)
        if not is_checkout(path):
            raise GitError(f"repo {repo}: not a git repository")
        known[repo, base] = resolve_base(path, base)
    return known[repo, base]
