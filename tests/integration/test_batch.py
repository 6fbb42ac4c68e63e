"""`agent batch` on this machine, on real git repositories, against the fake model server over HTTP.

Each task is one `agent exec` in a worktree of its own, on branch agent/BATCH-ID; its result is a
line of DIR/results.jsonl with its patch and events beside it; a rerun skips what finished.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.batch_helpers import batch_server, prompts_seen, result_lines, results, run_batch, write_tasks
from tests.conftest import agent_process_env
from tests.processes import pids_running
from tests.worktree_helpers import agent_branches, checkout_state, committed_repo, git

FOLDERS = Path(__file__).parent / "batch_tasks"  # Terminal-Bench / Harbor task folders


@pytest.fixture
def server():
    with batch_server() as fake:
        yield fake


def test_four_tasks_with_two_workers_each_on_its_branch_then_a_rerun_sends_nothing(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    before = checkout_state(repo)
    meet = tmp_path / "meet"
    meet.mkdir()

    def meeting(me: str, other: str) -> str:  # each pair runs at once, or waits out its 30 s
        wait = f"for i in $(seq 300); do [ -f {meet}/{other} ] && break; sleep 0.1; done"
        return f"touch {meet}/{me}; {wait}; [ -f {meet}/{other} ] && echo met; echo {me} > {me}.txt"

    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "a", "prompt": f"run: {meeting('a', 'b')}"},
            {"id": "b", "prompt": f"run: {meeting('b', 'a')}"},
            {"id": "c", "prompt": f"run: {meeting('c', 'd')}"},
            {"id": "d", "prompt": f"run: {meeting('d', 'c')}", "metadata": {"kind": "demo"}},
        ],
    )
    out = tmp_path / "out"
    done = run_batch(server, tasks, out, "--workers", "2", "--name", "demo", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert checkout_state(repo) == before  # the user's checkout: branch, index, status, HEAD
    assert agent_branches(repo) == ["agent/demo-a", "agent/demo-b", "agent/demo-c", "agent/demo-d"]
    found = results(out)
    assert sorted(found) == ["a", "b", "c", "d"] and len(result_lines(out)) == 4
    for task_id, record in found.items():
        assert record["status"] == "succeeded" and record["exit_code"] == 0
        assert record["branch"] == f"agent/demo-{task_id}"
        assert record["final_message"].startswith("done: touch")
        assert record["usage"]["input_tokens"] == 2000 and record["usage"]["output_tokens"] == 200
        assert record["usage"]["cost_usd"] > 0  # gpt-4o-mini has a price
        assert record["attempts"] == 1 and record["node"] and record["duration_s"] > 0
        assert record["base"] == before[3]
        worktree = record["worktree"]
        assert (tmp_path / "out" / record["patch"]).read_text().count(f"+{task_id}") == 1
        assert git(worktree, "status", "--porcelain") == f"?? {task_id}.txt"
        events = [json.loads(line) for line in (out / record["events"]).read_text().splitlines()]
        assert events[0]["type"] == "thread.started" and events[0]["thread_id"] == record["session_id"]
        shell = next(e["item"] for e in events if e["type"] == "item.completed" and "command" in e["item"])
        assert "met" in shell["aggregated_output"]  # the two of each pair ran at the same time
    assert found["d"]["metadata"] == {"kind": "demo"}
    assert "a  " in done.stdout and "4 tasks: 4 succeeded" in done.stdout  # the summary table

    asked = len(server.requests)
    again = run_batch(server, tasks, out, "--workers", "2", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert len(server.requests) == asked  # nothing was run again
    assert "4 task(s) finished earlier are skipped" in again.stderr
    assert len(result_lines(out)) == 4 and "4 tasks: 4 succeeded" in again.stdout
    report = subprocess.run(
        [sys.executable, "-m", "agent_cli", "batch", "report", str(out)],
        capture_output=True,
        text=True,
        env=agent_process_env(),
    )
    assert report.returncode == 0 and "4 tasks: 4 succeeded" in report.stdout


def test_a_malformed_line_is_reported_with_its_number_and_the_others_run(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "one", "prompt": "run: echo 1"},
            '{"id": "two", "prompt": ',
            {"id": "three"},
            {"id": "four", "prompt": "run: echo 4"},
        ],
    )
    out = tmp_path / "out"
    done = run_batch(server, tasks, out, cwd=repo)
    assert done.returncode == 1  # not everything ran
    assert "tasks.jsonl line 2: not JSON" in done.stderr
    assert "tasks.jsonl line 3: `prompt` must be a non-empty string" in done.stderr
    assert sorted(results(out)) == ["four", "one"]
    assert {record["status"] for record in results(out).values()} == {"succeeded"}
    assert sorted(set(prompts_seen(server))) == ["run: echo 1", "run: echo 4"]
    assert agent_branches(repo) == []  # no change: the worktrees went with their branches


def test_duplicate_ids_are_refused_before_anything_runs(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "x", "prompt": "run: echo 1"},
            {"id": "y", "prompt": "run: echo 2"},
            {"id": "x", "prompt": "run: echo 3"},
        ],
    )
    done = run_batch(server, tasks, tmp_path / "out", cwd=repo)
    assert done.returncode == 2
    assert "task ids must be unique; given more than once: 'x' (tasks.jsonl line 1, tasks.jsonl line 3)" in done.stderr
    assert server.requests == [] and not (tmp_path / "out").exists()


def test_an_unreachable_ray_address_fails_before_any_task_starts(server, tmp_path, listener):
    repo = committed_repo(tmp_path / "repo")
    port = listener.getsockname()[1]
    listener.close()  # nothing listens there now
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "x", "prompt": "run: echo 1"}])
    done = run_batch(server, tasks, tmp_path / "out", "--ray", f"127.0.0.1:{port}", cwd=repo, timeout=60)
    assert done.returncode == 2
    assert f"cannot reach the Ray cluster at 127.0.0.1:{port}" in done.stderr
    assert server.requests == [] and results(tmp_path / "out") == {}


def test_terminal_bench_task_folders_a_passing_and_a_failing_verifier(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    out = tmp_path / "out"
    done = run_batch(server, FOLDERS, out, cwd=repo)
    assert done.returncode == 1, done.stderr  # one task failed its verifier
    found = results(out)
    assert found["greet"]["status"] == "succeeded" and found["greet"]["reward"] == 1.0
    assert found["forget"]["status"] == "failed" and found["forget"]["reward"] == 0.0
    assert found["forget"]["exit_code"] == 0  # the agent's run went well; its tests did not pass
    assert "the verifier failed (exit 1)" in found["forget"]["error"]
    assert (out / "tasks" / "greet" / "verifier.log").read_text() == "PASS: greeting.txt says hello\n"
    assert "FAIL: missing.txt is not there" in (out / "tasks" / "forget" / "verifier.log").read_text()
    assert "mean reward 0.5 over 2" in done.stdout
    # the tests ran from a folder of their own: nothing of them is in the worktree or its patch
    patch = (out / found["greet"]["patch"]).read_text()
    assert "greeting.txt" in patch and "test.sh" not in patch and "expect.sh" not in patch


def test_one_task_folder_alone_is_a_batch_of_one(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    done = run_batch(server, FOLDERS / "greet", tmp_path / "out", cwd=repo)
    assert done.returncode == 0, done.stderr
    assert list(results(tmp_path / "out")) == ["greet"]


def test_a_task_past_its_timeout_is_interrupted_and_a_setup_command_runs_first(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "slow", "prompt": "run: echo half > half.txt; exec sleep 4244", "timeout": 3},
            {"id": "prepared", "prompt": "run: cat ready.txt > seen.txt", "setup": "echo ready > ready.txt"},
        ],
    )
    out = tmp_path / "out"
    done = run_batch(server, tasks, out, cwd=repo)
    assert done.returncode == 1, done.stderr
    found = results(out)
    assert found["slow"]["status"] == "timed_out" and found["slow"]["exit_code"] == 130
    assert "+half" in (out / found["slow"]["patch"]).read_text()  # what it did before, kept
    assert not pids_running("sleep", "4244")
    assert found["prepared"]["status"] == "succeeded"
    patch = (out / found["prepared"]["patch"]).read_text()
    assert "+++ b/seen.txt" in patch and "+ready" in patch  # the set-up ran before the agent's command
