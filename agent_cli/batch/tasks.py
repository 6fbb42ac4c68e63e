"""The tasks of a batch: one JSON object per line of a JSONL file, or Terminal-Bench task folders.

A line is ``{"id": …, "prompt": …}`` plus optional ``repo`` (a path, relative to the file, or a
git URL), ``base`` (a ref), ``model``, ``output_schema`` (a JSON Schema object), ``timeout``
(seconds), ``setup`` (a command run first in the worktree) and ``metadata`` (copied to the result).
A malformed line is reported with its line number and the others run; two tasks with one id refuse
the whole file before anything starts (results are kept by id).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ID_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
KEYS = ("id", "prompt", "repo", "base", "model", "output_schema", "timeout", "setup", "metadata")


class TaskFileError(Exception):
    """The tasks cannot be run at all (unreadable, duplicate ids); the message is for the user."""


@dataclass(frozen=True)
class Task:
    id: str
    prompt: str
    where: str  # "tasks.jsonl line 3", or the task's folder: for messages
    repo: str | None = None  # an absolute path or a git URL; None: the repository the batch runs in
    base: str | None = None
    model: str | None = None
    output_schema: dict[str, Any] | None = None
    timeout: float | None = None
    setup: str | None = None
    metadata: Any = None
    tests: dict[str, bytes] = field(default_factory=dict)  # a verifier's files (tests/test.sh at "test.sh")
    verifier_timeout: float | None = None


@dataclass(frozen=True)
class Rejected:
    where: str
    message: str

    def line(self) -> str:
        return f"{self.where}: {self.message}"


def check_id(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str) or not ID_PATTERN.match(value) or ".." in value or value.endswith(".lock"):
        raise ValueError(
            f"`id` must be up to 64 letters, digits, '.', '_' or '-', starting with a letter or digit; got {value!r}"
        )
    return value


def parse_line(text: str, where: str, folder: Path) -> Task:
    """One line of a tasks file as a Task; ValueError saying what is wrong with it."""
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} (column {exc.colno})") from None
    if not isinstance(data, dict):
        raise ValueError('a task is a JSON object: {"id": …, "prompt": …}')
    unknown = sorted(set(data) - set(KEYS))
    if unknown:
        raise ValueError(
            f"unknown key{'s' if len(unknown) > 1 else ''} {', '.join(unknown)} (known: {', '.join(KEYS)})"
        )
    if "id" not in data:
        raise ValueError("no `id`")
    task_id = check_id(data["id"])
    prompt = data.get("prompt")
    if not isinstance(prompt, str) or not prompt.strip():
        raise ValueError("`prompt` must be a non-empty string")
    for key in ("repo", "base", "model", "setup"):
        if data.get(key) is not None and (not isinstance(data[key], str) or not data[key].strip()):
            raise ValueError(f"`{key}` must be a non-empty string")
    check_repo(data.get("repo"))
    check_base(data.get("base"))
    schema = data.get("output_schema")
    if schema is not None and not isinstance(schema, dict):
        raise ValueError("`output_schema` must be a JSON Schema object")
    timeout = data.get("timeout")
    if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0):
        raise ValueError("`timeout` must be a positive number of seconds")
    return Task(
        id=task_id,
        prompt=prompt,
        where=where,
        repo=resolve_repo(data.get("repo"), folder),
        base=data.get("base"),
        model=data.get("model"),
        output_schema=schema,
        timeout=float(timeout) if timeout is not None else None,
        setup=data.get("setup"),
        metadata=data.get("metadata"),
    )


def check_repo(repo: str | None) -> None:
    """A repo git would read as an option (``--upload-pack=CMD``, which it runs) is refused."""
    if repo is not None and repo.strip().startswith("-"):
        raise ValueError(f"`repo` must not start with '-' (git would read it as an option): {repo!r}")


def check_base(base: str | None) -> None:
    if base is not None and base.strip().startswith("-"):
        raise ValueError(f"`base` must not start with '-' (git would read it as an option): {base!r}")


def is_url(repo: str) -> bool:
    """A git URL (``https://…``, ``file://…``, ``git@host:path``) rather than a path."""
    return "://" in repo or bool(re.match(r"^[\w.-]+@[\w.-]+:", repo))


def resolve_repo(repo: str | None, folder: Path) -> str | None:
    """A path relative to the tasks file's folder as an absolute one; a URL as it is."""
    if repo is None or is_url(repo):
        return repo
    return str((folder / Path(repo).expanduser()).resolve())


def read_jsonl(path: Path) -> tuple[list[Task], list[Rejected]]:
    """The tasks of a JSONL file and the lines that are not tasks (blank lines and ``#`` comments
    are skipped). TaskFileError when the file cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise TaskFileError(f"cannot read {path}: {getattr(exc, 'strerror', None) or exc}") from None
    tasks: list[Task] = []
    rejected: list[Rejected] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        where = f"{path.name} line {number}"
        try:
            tasks.append(parse_line(line, where, path.parent.resolve()))
        except ValueError as exc:
            rejected.append(Rejected(where, str(exc)))
    return tasks, rejected


def refuse_duplicates(tasks: list[Task]) -> None:
    """TaskFileError naming every id given twice, and where."""
    seen: dict[str, list[str]] = {}
    for task in tasks:
        seen.setdefault(task.id, []).append(task.where)
    twice = {task_id: places for task_id, places in seen.items() if len(places) > 1}
    if twice:
        listed = "; ".join(f"{task_id!r} ({', '.join(places)})" for task_id, places in twice.items())
        raise TaskFileError(f"task ids must be unique; given more than once: {listed}. Nothing was run.")
