"""What `agent batch` costs over running `agent exec` by hand, and what two workers buy on this machine.

Run: python bench/batch_overhead.py [--tasks N] [--parallel-tasks M] [--rounds R] [--latency S] [--warm]

Every task is one tool round trip against the fake model server (a `shell` call that writes a file,
then the answer), on a fresh committed repository per run. Per round, interleaved:
- plain: the N prompts, one `agent exec -C REPO` after the other (no worktree, no batch);
- batch, 1 worker: the same N tasks through `agent batch --workers 1` (a worktree and branch per
  task, the patch, results.jsonl); overhead per task = (batch - plain) / N, and batch / plain;
- M tasks with `agent batch --workers 1` and `--workers 2`: the wall-time ratio 2 workers / 1.
`--latency S` makes the model take S seconds per reply (0 by default: the worst case for a pool
on 2 cores, where the runs' own CPU is all there is). Cold (`--no-daemon`) by default; `--warm`
runs every `agent exec` from the bench's own warm server. The load average is printed before and
after: other work on the machine stretches every figure, the ratios of one round less.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from exec_latency import WarmServer  # noqa: E402  # pyright: ignore[reportImplicitRelativeImport]

from tests.batch_helpers import CHAT, answer_by_prompt, write_tasks  # noqa: E402
from tests.fake_server import FakeModelServer, RecordedRequest, Reply  # noqa: E402
from tests.worktree_helpers import committed_repo  # noqa: E402


def prompts(count: int, tag: str) -> list[str]:
    return [f"run: echo {tag}{i} > f{i}.txt" for i in range(count)]


CPU: list[float] = []  # the CPU time of the last measured step (its processes and those they waited for)


def children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv[:4])} failed ({done.returncode}): {done.stderr[-2000:]}")
    return elapsed


def measured(step, *args) -> tuple[float, float]:
    """(wall, CPU) seconds of ``step(*args)``."""
    cpu = children_cpu()
    wall = step(*args)
    return wall, children_cpu() - cpu


def plain(texts: list[str], scratch: Path, env: dict[str, str]) -> float:
    repo = committed_repo(scratch / "plain")
    started = time.perf_counter()
    for text in texts:
        timed([sys.executable, "-m", "agent_cli", "exec", *CHAT, "-C", str(repo), text], repo, env)
    return time.perf_counter() - started


def batch(texts: list[str], scratch: Path, env: dict[str, str], workers: int, label: str) -> float:
    repo = committed_repo(scratch / f"repo-{label}")
    tasks = write_tasks(scratch / f"{label}.jsonl", [{"id": f"t{i}", "prompt": t} for i, t in enumerate(texts)])
    argv = [sys.executable, "-m", "agent_cli", "batch", str(tasks), "--out", str(scratch / f"out-{label}")]
    return timed([*argv, "--workers", str(workers), *CHAT], repo, env)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--tasks", type=int, default=8, help="tasks for the overhead (default 8)")
    parser.add_argument("--parallel-tasks", type=int, default=40, help="tasks for the 2-worker ratio (default 40)")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--latency", type=float, default=0.0, help="seconds the model takes per reply")
    parser.add_argument("--warm", action="store_true", help="agent exec from a warm server instead of cold")
    args = parser.parse_args()

    def answer(request: RecordedRequest) -> Reply:
        if args.latency:
            time.sleep(args.latency)
        return answer_by_prompt(request)

    scratch_root = Path(tempfile.mkdtemp(prefix="bench-batch-"))
    runtime = tempfile.mkdtemp(prefix="bench-batch-run-")
    warm = WarmServer(runtime)
    rows: dict[str, list[float]] = {"plain": [], "batch1": [], "w1": [], "w2": []}
    cpu: dict[str, list[float]] = {"plain": [], "batch1": []}
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}; cores: {os.cpu_count()}")
    with FakeModelServer(fallback=answer) as server:
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))},
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": "bench",
            "AGENT_HOME": str(scratch_root / "home"),
            "HOME": str(scratch_root / "user"),
            "AGENT_LSP_AUTODETECT": "0",
            "XDG_RUNTIME_DIR": runtime,
            "PYTHONPATH": str(REPO),
        }
        if not args.warm:
            env["AGENT_NO_DAEMON"] = "1"
        (scratch_root / "user").mkdir()
        try:
            plain(prompts(1, "warmup"), scratch_root / "warmup", env)  # bytecode, first-run files, the warm server
            if args.warm:
                warm.wait_listening(30)
            for round_number in range(args.rounds):
                scratch = scratch_root / f"round{round_number}"
                scratch.mkdir()
                for key, (wall, used) in (
                    ("plain", measured(plain, prompts(args.tasks, "p"), scratch, env)),
                    ("batch1", measured(batch, prompts(args.tasks, "b"), scratch, env, 1, "overhead")),
                ):
                    rows[key].append(wall)
                    cpu[key].append(used)
                rows["w1"].append(batch(prompts(args.parallel_tasks, "s"), scratch, env, 1, "w1"))
                rows["w2"].append(batch(prompts(args.parallel_tasks, "q"), scratch, env, 2, "w2"))
                print(
                    f"round {round_number + 1}: plain {rows['plain'][-1]:.1f}s, batch {rows['batch1'][-1]:.1f}s "
                    f"({args.tasks} tasks); {args.parallel_tasks} tasks: 1 worker {rows['w1'][-1]:.1f}s, "
                    f"2 workers {rows['w2'][-1]:.1f}s",
                    flush=True,
                )
                shutil.rmtree(scratch, ignore_errors=True)
        finally:
            warm.stop()
            shutil.rmtree(scratch_root, ignore_errors=True)
            shutil.rmtree(runtime, ignore_errors=True)
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    overheads = [(b - p) / args.tasks for b, p in zip(rows["batch1"], rows["plain"])]
    ratios = [b / p for b, p in zip(rows["batch1"], rows["plain"])]
    speedups = [two / one for two, one in zip(rows["w2"], rows["w1"])]
    versus_plain = [two / (p / args.tasks * args.parallel_tasks) for two, p in zip(rows["w2"], rows["plain"])]
    mode = "warm" if args.warm else "cold"
    print(f"\nagent exec {mode}, model latency {args.latency:g}s per reply, medians of {args.rounds} rounds:")
    print(f"  plain exec per task          {statistics.median(rows['plain']) / args.tasks * 1000:.0f} ms")
    print(
        f"  batch overhead per task      {statistics.median(overheads) * 1000:+.0f} ms  (batch / plain {statistics.median(ratios):.3f}x; rounds: {', '.join(f'{r:.3f}' for r in ratios)})"
    )
    cpu_overheads = [(b - p) / args.tasks for b, p in zip(cpu["batch1"], cpu["plain"])]
    cpu_ratio = statistics.median(b / p for b, p in zip(cpu["batch1"], cpu["plain"]))
    print(
        f"  CPU: plain per task {statistics.median(cpu['plain']) / args.tasks * 1000:.0f} ms, batch overhead per "
        f"task {statistics.median(cpu_overheads) * 1000:+.0f} ms (batch / plain {cpu_ratio:.3f}x)"
    )
    print(
        f"  {args.parallel_tasks} tasks, 2 workers / 1     {statistics.median(speedups):.3f}x  (rounds: {', '.join(f'{r:.3f}' for r in speedups)})"
    )
    print(f"  2 workers / plain one by one {statistics.median(versus_plain):.3f}x")


if __name__ == "__main__":
    main()
