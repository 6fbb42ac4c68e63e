"""`agent batch` loses nothing: a batch killed by SIGKILL resumes (finished tasks skipped, the rest
started over), Ctrl+C interrupts the running tasks and records them as such with no process left
behind, and a worktree left stale by a repository cloned again is never used."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess

import pytest

from tests.batch_helpers import (
    batch_server,
    children,
    prompts_seen,
    result_lines,
    results,
    run_batch,
    start_batch,
    write_tasks,
)
from tests.processes import alive, pids_running
from tests.waiting import wait_for
from tests.worktree_helpers import agent_branches, committed_repo, git


@pytest.fixture
def server():
    with batch_server() as fake:
        yield fake


def blocking(task_id: str, marks, gate, seconds: int) -> str:
    """A command that leaves a change, says it started, then waits (as ``sleep SECONDS``, found by
    its command line) until ``gate`` exists; once it does, it finishes at once."""
    return (
        f"run: [ -f {gate} ] || echo half > half-{task_id}.txt; touch {marks}/{task_id}; "
        f"[ -f {gate} ] || exec sleep {seconds}; echo {task_id} > {task_id}.txt"
    )


def test_a_batch_killed_by_sigkill_resumes_finished_tasks_skipped_the_rest_started_over(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    marks, gate = tmp_path / "marks", tmp_path / "gate"
    marks.mkdir()
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "a", "prompt": "run: echo a > a.txt"},
            {"id": "b", "prompt": "run: echo b > b.txt"},
            {"id": "c", "prompt": blocking("c", marks, gate, 4241)},
            {"id": "d", "prompt": blocking("d", marks, gate, 4241)},
        ],
    )
    out = tmp_path / "out"
    batch = start_batch(server, tasks, out, "--workers", "2", cwd=repo)
    try:
        wait_for(lambda: sorted(results(out)) == ["a", "b"], within=120, what="a and b to finish")
        wait_for(lambda: len(pids_running("sleep", "4241")) == 2, within=60, what="c and d to be running")
        runs = children(batch.pid)
        sleeps = pids_running("sleep", "4241")
        assert len(runs) == 2 and all(alive(pid) for pid in runs)
        os.kill(batch.pid, signal.SIGKILL)
        batch.wait(timeout=10)
    finally:
        if batch.poll() is None:
            batch.kill()
    # its `agent exec` runs lost their reader and stopped, and their commands with them
    wait_for(lambda: not any(alive(pid) for pid in runs + sleeps), within=30, what="the orphaned runs to end")
    assert sorted(line["id"] for line in result_lines(out)) == ["a", "b"]  # whole lines only

    asked = len(server.requests)
    gate.touch()
    again = run_batch(server, tasks, out, "--workers", "2", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert "2 task(s) finished earlier are skipped" in again.stderr
    assert {record["status"] for record in results(out).values()} == {"succeeded"}
    assert sorted(line["id"] for line in result_lines(out)[:2]) == ["a", "b"] and len(result_lines(out)) == 4
    rerun = prompts_seen(server)[asked:]
    assert rerun and all("exec sleep 4241" in prompt for prompt in rerun)  # only c and d, from the start
    assert agent_branches(repo) == ["agent/out-a", "agent/out-b", "agent/out-c", "agent/out-d"]
    for task_id in "cd":  # started over in a fresh worktree: the half-done change of the killed run is gone
        assert git(results(out)[task_id]["worktree"], "status", "--porcelain") == f"?? {task_id}.txt"


def test_ctrl_c_interrupts_the_running_tasks_records_them_and_leaves_no_process(server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    marks, gate = tmp_path / "marks", tmp_path / "gate"
    marks.mkdir()
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [
            {"id": "x", "prompt": blocking("x", marks, gate, 4242)},
            {"id": "y", "prompt": blocking("y", marks, gate, 4242)},
            {"id": "z", "prompt": "run: echo z > z.txt"},
        ],
    )
    out = tmp_path / "out"
    batch = start_batch(server, tasks, out, "--workers", "2", cwd=repo)
    try:
        wait_for(lambda: len(pids_running("sleep", "4242")) == 2, within=120, what="x and y to be running")
        runs, sleeps = children(batch.pid), pids_running("sleep", "4242")
        batch.send_signal(signal.SIGINT)
        stdout, stderr = batch.communicate(timeout=60)
    finally:
        if batch.poll() is None:
            batch.kill()
    assert batch.returncode == 130, stderr
    assert "stopping: interrupting the running tasks" in stderr
    found = results(out)
    assert sorted(found) == ["x", "y"]  # z never started: nothing recorded, a rerun runs it
    for record in found.values():
        assert record["status"] == "interrupted" and record["exit_code"] == 130
    assert not any(alive(pid) for pid in runs + sleeps)  # the runs and their commands are gone
    assert "interrupted" in stdout

    gate.touch()
    again = run_batch(server, tasks, out, "--workers", "2", cwd=repo)
    assert again.returncode == 0, again.stderr
    assert {record["status"] for record in results(out).values()} == {"succeeded"}
    assert sorted(results(out)) == ["x", "y", "z"]
    for task_id in "xy":  # started over: the interrupted run's half-done change is gone
        assert git(results(out)[task_id]["worktree"], "status", "--porcelain") == f"?? {task_id}.txt"


def test_a_stale_worktree_of_a_repository_cloned_again_is_set_aside_not_used(server, tmp_path):
    source = committed_repo(tmp_path / "source")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(origin)], check=True)
    repo = tmp_path / "repo"
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    tasks = write_tasks(tmp_path / "tasks.jsonl", [{"id": "t", "prompt": "run: echo t > t.txt"}])
    first = run_batch(server, tasks, tmp_path / "out1", "--name", "nightly", cwd=repo)
    assert first.returncode == 0, first.stderr
    old = results(tmp_path / "out1")["t"]["worktree"]

    shutil.rmtree(repo)
    subprocess.run(["git", "clone", "-q", str(origin), str(repo)], check=True)
    second = run_batch(server, tasks, tmp_path / "out2", "--name", "nightly", cwd=repo)
    assert second.returncode == 0, second.stderr
    record = results(tmp_path / "out2")["t"]
    assert record["status"] == "succeeded" and record["worktree"] == old
    assert any("worktree nightly-t was stale" in warning for warning in record["warnings"])
    assert "warning: t: worktree nightly-t was stale" in second.stderr
    assert git(old, "status", "--porcelain") == "?? t.txt"  # a real worktree of the new clone
    assert agent_branches(repo) == ["agent/nightly-t"]
