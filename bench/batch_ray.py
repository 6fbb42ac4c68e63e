"""`agent batch --ray` on a local Ray cluster (a head and one more node, 127.0.0.1 only): what a task
costs there over the same tasks on this machine, and how long a killed node takes to cost nothing
but an attempt.

Run: python bench/batch_ray.py [--tasks N] [--rounds R] [--cpus C]

Per round, interleaved: the N tasks (one tool round trip each against the fake model server) with
`agent batch --workers W` here and with `agent batch --ray` on the cluster (W = the cluster's CPUs,
C per node); the difference over N is the Ray overhead per task (the driver's connection included).
Then two tasks that wait in a command until told: once the one on the second node is in its
command, that node is killed (all its processes, SIGKILL) and the tasks are told to finish; the
recovery is the time from the kill until the task starts again on the head (the driver's
`started ID on NODE (attempt 2)` line), and the time until its result is in DIR. The node is added
again for the next round. Cold `agent exec` (no warm server) on every node. Needs `pip install
'agent-cli[ray]'`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from ray.cluster_utils import Cluster  # noqa: E402

from tests.batch_helpers import batch_argv, batch_server, write_tasks  # noqa: E402
from tests.worktree_helpers import committed_repo  # noqa: E402

LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
FAST_FAILURE = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500, "health_check_failure_threshold": 4}


def node_env(home: Path) -> dict[str, str]:
    return {**LOOPBACK, "AGENT_HOME": str(home / "agent"), "AGENT_NO_DAEMON": "1", "AGENT_LSP_AUTODETECT": "0"}


def with_env(env: dict[str, str], start):
    saved = {name: os.environ.get(name) for name in env}
    os.environ.update(env)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        os.environ.pop(name, None)
    try:
        return start()
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def driver_env(server, scratch: Path) -> dict[str, str]:
    return {
        **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))},
        **LOOPBACK,
        "OPENAI_BASE_URL": server.openai_base_url,
        "OPENAI_API_KEY": "bench",
        "AGENT_HOME": str(scratch / "driver-home"),
        "AGENT_NO_DAEMON": "1",
        "AGENT_LSP_AUTODETECT": "0",
        "PYTHONPATH": str(REPO),
    }


def timed_batch(server, scratch: Path, label: str, count: int, extra: list[str]) -> float:
    repo = committed_repo(scratch / f"repo-{label}")
    tasks = write_tasks(
        scratch / f"{label}.jsonl", [{"id": f"t{i}", "prompt": f"run: echo {i} > f{i}.txt"} for i in range(count)]
    )
    started = time.perf_counter()
    done = subprocess.run(
        batch_argv(tasks, scratch / f"out-{label}", *extra),
        cwd=repo,
        env=driver_env(server, scratch),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{label} failed: {done.stderr[-3000:]}")
    return time.perf_counter() - started


def recovery(cluster: Cluster, server, scratch: Path, home: Path, cpus: int) -> tuple[float, float]:
    repo = committed_repo(scratch / "repo-kill")
    marks, gate = scratch / "marks", scratch / "gate"
    marks.mkdir()
    wait = f"while [ ! -f {gate} ]; do sleep 0.05; done"
    tasks = write_tasks(
        scratch / "kill.jsonl",
        [{"id": n, "prompt": f"run: touch {marks}/{n}; {wait}; echo {n} > {n}.txt"} for n in "pq"],
    )
    out = scratch / "out-kill"
    driver = subprocess.Popen(
        batch_argv(tasks, out, "--ray", str(cluster.address)),
        cwd=repo,
        env=driver_env(server, scratch),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[tuple[float, str]] = []
    stderr = driver.stderr
    assert stderr is not None
    threading.Thread(
        target=lambda: [lines.append((time.perf_counter(), line)) for line in iter(stderr.readline, "")], daemon=True
    ).start()
    victim = next(node for node in cluster.list_all_nodes() if not node.head)
    deadline = time.monotonic() + 180
    moved = None
    while moved is None and time.monotonic() < deadline:
        moved = next(
            (line.split()[1] for _, line in list(lines) if line.startswith("started") and victim.node_id in line), None
        )
        time.sleep(0.05)
    while moved and not (marks / moved).exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    killed = time.perf_counter()
    cluster.remove_node(victim, allow_graceful=False)
    while not any(line.startswith(f"started {moved} ") and "(attempt 2)" in line for _, line in list(lines)):
        time.sleep(0.02)  # told to finish only once it runs again (a dying worker must not finish it)
    gate.touch()
    driver.wait(timeout=300)
    restarted = next(at for at, line in lines if line.startswith(f"started {moved} ") and "(attempt 2)" in line)
    result = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines() if f'"{moved}"' in line][-1]
    assert result["status"] == "succeeded" and result["attempts"] == 2, result
    finished = next(at for at, line in lines if line.startswith("ok") and f" {moved} " in line)
    with_env(
        node_env(home), lambda: cluster.add_node(num_cpus=cpus, include_dashboard=False, node_ip_address="127.0.0.1")
    )
    cluster.wait_for_nodes()
    return restarted - killed, finished - killed


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--cpus", type=int, default=1, help="CPUs per node (default 1)")
    args = parser.parse_args()
    home = Path(tempfile.mkdtemp(prefix="bench-ray-"))
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()}")
    started = time.perf_counter()
    cluster = with_env(
        node_env(home),
        lambda: Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": args.cpus,
                "include_dashboard": False,
                "node_ip_address": "127.0.0.1",
                "_system_config": FAST_FAILURE,
            },
        ),
    )
    with_env(
        node_env(home),
        lambda: cluster.add_node(num_cpus=args.cpus, include_dashboard=False, node_ip_address="127.0.0.1"),
    )
    cluster.wait_for_nodes()
    print(f"cluster of 2 nodes up in {time.perf_counter() - started:.1f}s")
    rows: dict[str, list[float]] = {"local": [], "ray": [], "restart": [], "done": []}
    try:
        with batch_server() as server:
            for round_number in range(args.rounds):
                scratch = home / f"round{round_number}"
                scratch.mkdir()
                rows["local"].append(
                    timed_batch(server, scratch, "local", args.tasks, ["--workers", str(2 * args.cpus)])
                )
                rows["ray"].append(timed_batch(server, scratch, "ray", args.tasks, ["--ray", str(cluster.address)]))
                restart, done = recovery(cluster, server, scratch, home, args.cpus)
                rows["restart"].append(restart)
                rows["done"].append(done)
                print(
                    f"round {round_number + 1}: {args.tasks} tasks here {rows['local'][-1]:.1f}s, on Ray {rows['ray'][-1]:.1f}s; killed node: restarted after {restart:.1f}s, result after {done:.1f}s",
                    flush=True,
                )
    finally:
        cluster.shutdown()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    overhead = [(r - local) / args.tasks for r, local in zip(rows["ray"], rows["local"])]
    print(f"\nmedians of {args.rounds} rounds, {args.tasks} tasks, 2 nodes x {args.cpus} CPU:")
    print(f"  here, {2 * args.cpus} workers      {statistics.median(rows['local']):.1f}s")
    print(
        f"  on Ray                {statistics.median(rows['ray']):.1f}s  (overhead per task {statistics.median(overhead) * 1000:+.0f} ms; rounds {', '.join(f'{o * 1000:+.0f}' for o in overhead)})"
    )
    print(
        f"  killed node: the task runs again after {statistics.median(rows['restart']):.1f}s (rounds {', '.join(f'{r:.1f}' for r in rows['restart'])}), its result after {statistics.median(rows['done']):.1f}s"
    )


if __name__ == "__main__":
    main()
