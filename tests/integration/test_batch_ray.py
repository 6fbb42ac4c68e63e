"""`agent batch --ray` on a real Ray cluster started here: a head and a second node on 127.0.0.1
(``ray.cluster_utils.Cluster``, one cluster for the module), the driver a real `agent batch`
process. Tasks spread over both nodes; a node killed in the middle of a task costs an attempt, not
the task; only the provider's variables travel with a task. Skipped where ray is not installed."""

from __future__ import annotations

import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.batch_helpers import batch_argv, batch_server, results, run_batch, write_tasks
from tests.conftest import PROVIDER_KEYS, REPO, agent_process_env, provider_env
from tests.waiting import wait_for
from tests.worktree_helpers import committed_repo

ray = pytest.importorskip("ray", reason="ray is not installed (pip install 'agent-cli[ray]'; the test extra has it)")
from ray.cluster_utils import Cluster  # noqa: E402

# Ray's nodes (node_ip_address) and driver talk over 127.0.0.1 only (without this the driver resolves
# 127.0.0.1 to the machine's own address), and send no usage statistics anywhere
LOOPBACK = {"RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0"}
HOMES: dict[Cluster, Path] = {}  # the folder the nodes' $HOME and $AGENT_HOME are in
FAST_FAILURE = {"health_check_initial_delay_ms": 0, "health_check_period_ms": 500, "health_check_failure_threshold": 4}


def node_environment(home: Path) -> dict[str, str]:
    """What the nodes' processes start with: an agent home of their own, no provider key."""
    return {
        **LOOPBACK,
        "AGENT_HOME": str(home / "agent"),
        "HOME": str(home),
        "AGENT_NO_DAEMON": "1",
        "AGENT_LSP_AUTODETECT": "0",
        "PYTHONPATH": str(REPO),
    }


def add_node(cluster: Cluster, home: Path):
    with pytest.MonkeyPatch.context() as patch:
        for name, value in node_environment(home).items():
            patch.setenv(name, value)
        for name in PROVIDER_KEYS:
            patch.delenv(name, raising=False)
        node = cluster.add_node(num_cpus=1, include_dashboard=False, node_ip_address="127.0.0.1")
    cluster.wait_for_nodes()
    return node


@pytest.fixture(scope="module")
def cluster(tmp_path_factory) -> Iterator[Cluster]:
    home = tmp_path_factory.mktemp("ray-nodes")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in node_environment(home).items():
            patch.setenv(name, value)
        for name in PROVIDER_KEYS:
            patch.delenv(name, raising=False)
        started = Cluster(
            initialize_head=True,
            head_node_args={
                "num_cpus": 1,
                "include_dashboard": False,
                "node_ip_address": "127.0.0.1",
                "_system_config": FAST_FAILURE,
            },
        )
    assert str(started.address).startswith("127.0.0.1:")
    add_node(started, home)
    HOMES[started] = home
    yield started
    started.shutdown()


@pytest.fixture
def server():
    with batch_server() as fake:
        yield fake


def node_ids(cluster: Cluster) -> set[str]:
    return {node.node_id for node in cluster.list_all_nodes()}


def test_tasks_spread_over_both_nodes_and_only_the_provider_travels(cluster, server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": f"t{i}", "prompt": f'run: echo "[$DRIVER_ONLY_MARK]" > t{i}.txt; cat t{i}.txt'} for i in range(4)],
    )
    out = tmp_path / "out"
    done = run_batch(
        server,
        tasks,
        out,
        "--ray",
        str(cluster.address),
        cwd=repo,
        env={**LOOPBACK, "DRIVER_ONLY_MARK": "from-the-driver"},
    )
    assert done.returncode == 0, done.stderr
    found = results(out)
    assert sorted(found) == ["t0", "t1", "t2", "t3"]
    assert {record["node"] for record in found.values()} == node_ids(cluster)  # both nodes ran tasks
    for task_id, record in found.items():
        assert record["status"] == "succeeded" and record["attempts"] == 1
        patch = (out / record["patch"]).read_text()  # it came back from the node that made it
        assert f"+++ b/{task_id}.txt" in patch and "+[]" in patch  # the driver's variable did not travel
        assert (out / record["events"]).read_text().startswith('{"type": "thread.started"')
    assert "DRIVER_ONLY_MARK" not in str(server.requests[0].headers)


def test_a_repository_given_by_url_is_cloned_on_the_node(cluster, server, tmp_path):
    source = committed_repo(tmp_path / "source")
    origin = tmp_path / "origin.git"
    subprocess.run(["git", "clone", "-q", "--bare", str(source), str(origin)], check=True)
    tasks = write_tasks(
        tmp_path / "tasks.jsonl", [{"id": "u", "prompt": "run: echo u > u.txt", "repo": f"file://{origin}"}]
    )
    out = tmp_path / "out"
    done = run_batch(server, tasks, out, "--ray", str(cluster.address), cwd=tmp_path, env=LOOPBACK)
    assert done.returncode == 0, done.stderr
    record = results(out)["u"]
    clones = [p for p in (HOMES[cluster] / "agent" / "batch" / "clones").glob("origin-*") if p.is_dir()]
    assert len(clones) == 1 and record["worktree"].startswith(str(HOMES[cluster]))
    assert "+++ b/u.txt" in (out / record["patch"]).read_text()


def test_a_node_killed_mid_task_costs_an_attempt_and_every_task_succeeds(cluster, server, tmp_path):
    repo = committed_repo(tmp_path / "repo")
    marks, gate = tmp_path / "marks", tmp_path / "gate"
    marks.mkdir()
    wait = f"while [ ! -f {gate} ]; do sleep 0.1; done"
    tasks = write_tasks(
        tmp_path / "tasks.jsonl",
        [{"id": name, "prompt": f"run: touch {marks}/{name}; {wait}; echo {name} > {name}.txt"} for name in "pq"],
    )
    out = tmp_path / "out"
    env = agent_process_env(**provider_env(server, "chat"), **LOOPBACK)
    driver = subprocess.Popen(
        batch_argv(tasks, out, "--ray", str(cluster.address), "--retries", "2"),
        cwd=repo,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    stderr = driver.stderr
    assert stderr is not None
    reader = threading.Thread(target=lambda: lines.extend(iter(stderr.readline, "")), daemon=True)
    reader.start()
    (victim,) = [node for node in cluster.list_all_nodes() if not node.head]
    try:
        started = wait_for(
            lambda: [line.split()[1] for line in lines if line.startswith("started") and victim.node_id in line],
            within=120,
            what="a task to start on the second node",
        )
        wait_for(lambda: (marks / started[0]).exists(), within=60, what="that task to be in its command")
        cluster.remove_node(victim, allow_graceful=False)
        # told to finish only once it runs again: a worker of the dead node that lives on for a moment
        # must not finish the first run (it could hand its result straight to the driver)
        wait_for(
            lambda: any(f"started {started[0]} on" in line and "(attempt 2)" in line for line in lines),
            within=120,
            what="the task to run again on the head",
        )
        gate.touch()
        driver.wait(timeout=180)
    finally:
        if driver.poll() is None:
            driver.kill()
        add_node(cluster, HOMES[cluster])
    reader.join(timeout=10)
    assert driver.returncode == 0, "".join(lines)
    found = results(out)
    assert {record["status"] for record in found.values()} == {"succeeded"}
    moved = found[started[0]]
    assert moved["attempts"] == 2 and moved["node"] != victim.node_id  # ran again on the head
    assert "+++ b/" + started[0] + ".txt" in (out / moved["patch"]).read_text()
    assert any(f"started {started[0]} on" in line and "(attempt 2)" in line for line in lines)
