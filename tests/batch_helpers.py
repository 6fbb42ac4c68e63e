"""For the `agent batch` tests: a model that answers each task by its prompt (tasks run in any order,
several at once, so no fixed script fits), task files, and the batch run as a user runs it.

A prompt ``run: COMMAND`` gets one ``shell`` call of COMMAND, then the answer ``done: COMMAND``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO, agent_process_env, provider_env
from tests.fake_server import FakeModelServer, RecordedRequest, Reply, ToolCall, Usage

CHAT = ["--provider", "openai-chat", "-m", "gpt-4o-mini"]  # a model with a known price: costs are shown
PREFIX = "run: "


def answer_by_prompt(request: RecordedRequest) -> Reply:
    messages = request.body["messages"]
    prompt = next(m["content"] for m in messages if m["role"] == "user" and str(m["content"]).startswith(PREFIX))
    command = prompt[len(PREFIX) :].strip()
    usage = Usage(input_tokens=1000, output_tokens=100)
    if messages[-1]["role"] == "tool":
        return Reply(text=f"done: {command}", usage=usage)
    return Reply(tool_calls=[ToolCall("shell", {"command": command})], usage=usage)


def batch_server() -> FakeModelServer:
    return FakeModelServer(fallback=answer_by_prompt)


def prompts_seen(server: FakeModelServer) -> list[str]:
    """The task prompt of every model request, in order."""
    return [
        next(m["content"] for m in r.body["messages"] if m["role"] == "user" and str(m["content"]).startswith(PREFIX))
        for r in server.requests
    ]


def write_tasks(path: Path, tasks: list[dict[str, Any] | str]) -> Path:
    """A JSONL file; a str is written as it is (a malformed line)."""
    path.write_text("".join((t if isinstance(t, str) else json.dumps(t)) + "\n" for t in tasks))
    return path


def batch_argv(tasks: Path, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-m", "agent_cli", "batch", str(tasks), "--out", str(out), *CHAT, *extra]


def run_batch(
    server: FakeModelServer,
    tasks: Path,
    out: Path,
    *extra: str,
    cwd: Path,
    timeout: float = 180,
    env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        batch_argv(tasks, out, *extra),
        cwd=cwd,
        env=agent_process_env(**provider_env(server, "chat"), **(env or {})),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def start_batch(server: FakeModelServer, tasks: Path, out: Path, *extra: str, cwd: Path) -> subprocess.Popen[str]:
    return subprocess.Popen(
        batch_argv(tasks, out, *extra),
        cwd=cwd,
        env=agent_process_env(**provider_env(server, "chat")),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def results(out: Path) -> dict[str, dict[str, Any]]:
    """The last line of each id in DIR/results.jsonl."""
    found: dict[str, dict[str, Any]] = {}
    path = out / "results.jsonl"
    for line in path.read_text().splitlines() if path.exists() else []:
        record = json.loads(line)
        found[record["id"]] = record
    return found


def result_lines(out: Path) -> list[dict[str, Any]]:
    path = out / "results.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def children(pid: int) -> list[int]:
    """The direct children of ``pid`` (every thread's), from /proc."""
    found: list[int] = []
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            found += [int(child) for child in (task / "children").read_text().split()]
        except OSError:
            continue
    return found


__all__ = ["REPO"]
