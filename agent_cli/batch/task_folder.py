"""Tasks in Terminal-Bench / Harbor's format: a folder with ``instruction.md`` (the prompt),
``task.toml`` (``[agent] timeout_sec``, ``[verifier] timeout_sec``) and ``tests/test.sh``, whose exit
status after the agent's run is the task's reward. TASKS may be one such folder or a folder of them.

The folder's ``environment/`` (a Dockerfile) is not built: the task runs in a worktree of the
repository, as any other. What Harbor has no key for goes in an ``[agent_cli]`` table of task.toml:
``repo``, ``base``, ``model``, ``setup``. The tests travel with the task as bytes, so a Ray node
without the folder runs them too.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.batch.tasks import Rejected, Task, check_base, check_id, check_repo, resolve_repo

INSTRUCTION = "instruction.md"
TASK_TOML = "task.toml"
TESTS = "tests"
ENTRY = "test.sh"
MAX_TEST_BYTES = 20_000_000  # a verifier's files are sent with every task: a data set is no test


def is_task_folder(path: Path) -> bool:
    return (path / INSTRUCTION).is_file()


def read_folders(path: Path) -> tuple[list[Task], list[Rejected]]:
    """``path`` itself when it is a task, else each sub-folder with an instruction.md (sorted)."""
    folders = [path] if is_task_folder(path) else sorted(p for p in path.iterdir() if p.is_dir() and is_task_folder(p))
    tasks: list[Task] = []
    rejected: list[Rejected] = []
    for folder in folders:
        try:
            tasks.append(read_folder(folder))
        except ValueError as exc:
            rejected.append(Rejected(str(folder), str(exc)))
    return tasks, rejected


def read_folder(folder: Path) -> Task:
    """One task folder; ValueError saying what is wrong with it."""
    task_id = check_id(folder.name)
    prompt = (folder / INSTRUCTION).read_text(encoding="utf-8")
    if not prompt.strip():
        raise ValueError(f"{INSTRUCTION} is empty")
    config = read_toml(folder / TASK_TOML)
    ours = table(config, "agent_cli")
    check_repo(string(ours, "repo"))
    check_base(string(ours, "base"))
    return Task(
        id=task_id,
        prompt=prompt,
        where=str(folder),
        repo=resolve_repo(string(ours, "repo"), folder),
        base=string(ours, "base"),
        model=string(ours, "model"),
        setup=string(ours, "setup"),
        timeout=seconds(table(config, "agent"), "agent"),
        tests=read_tests(folder / TESTS),
        verifier_timeout=seconds(table(config, "verifier"), "verifier"),
    )


def read_toml(path: Path) -> dict[str, Any]:
    import tomllib  # here: `agent exec` loads this module with cli.py and parses no TOML

    if not path.is_file():
        return {}
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"{TASK_TOML}: {exc}") from None


def table(config: dict[str, Any], name: str) -> dict[str, Any]:
    value = config.get(name, {})
    if not isinstance(value, dict):
        raise ValueError(f"{TASK_TOML}: [{name}] must be a table")
    return value


def string(values: dict[str, Any], key: str) -> str | None:
    value = values.get(key)
    if value is not None and (not isinstance(value, str) or not value.strip()):
        raise ValueError(f"{TASK_TOML}: [agent_cli] {key} must be a non-empty string")
    return value


def seconds(values: dict[str, Any], name: str) -> float | None:
    value = values.get("timeout_sec")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        raise ValueError(f"{TASK_TOML}: [{name}] timeout_sec must be a positive number")
    return float(value)


def read_tests(folder: Path) -> dict[str, bytes]:
    """Every file under tests/ by its path there; ValueError without tests/test.sh."""
    if not folder.is_dir():
        return {}
    if not (folder / ENTRY).is_file():
        raise ValueError(f"{TESTS}/ has no {ENTRY}")
    files: dict[str, bytes] = {}
    total = 0
    for path in sorted(folder.rglob("*")):
        if path.is_file() and not path.is_symlink():
            data = path.read_bytes()
            total += len(data)
            if total > MAX_TEST_BYTES:
                raise ValueError(f"{TESTS}/ holds more than {MAX_TEST_BYTES // 1_000_000} MB")
            files[path.relative_to(folder).as_posix()] = data
    return files
