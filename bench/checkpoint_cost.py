"""Benchmark: what a checkpoint costs on a large tree, beside a plain ``git stash create``.

Generates a tree of 20,000 files / 200 MB (text, mostly distinct content) in a temporary folder,
then for a git repository (the tree committed) and for a plain directory (a shadow repository):

- the first snapshot (every file hashed into a fresh index of our own),
- a later snapshot after 10 files changed (the index is kept: only those are hashed again),
- beside them, `git stash create` on the same tree with the same 10 changes (git repository only;
  it snapshots tracked files only, and touches nothing either).

Time is wall-clock; disk is what the object store grew by (loose objects, before any gc).

    python bench/checkpoint_cost.py [--files N] [--megabytes M] [--changed K]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_cli.checkpoints.snapshot import take_snapshot  # noqa: E402
from agent_cli.checkpoints.store import locate  # noqa: E402

WORDS = "alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu nu xi omicron pi rho sigma".split()


def generate(root: Path, files: int, total_bytes: int) -> None:
    rng = random.Random(7)
    size = total_bytes // files
    for number in range(files):
        directory = root / f"pkg{number // 500:03d}" / f"mod{number // 50 % 10}"
        directory.mkdir(parents=True, exist_ok=True)
        head = f"# file {number}\n".encode()
        body = " ".join(rng.choice(WORDS) for _ in range(size // 6)).encode()
        (directory / f"file{number:05d}.py").write_bytes((head + body)[:size])


def change(root: Path, count: int, round_: int) -> None:
    files = sorted(root.rglob("file*.py"))
    for path in files[round_ * 997 % len(files) :][:count]:
        with path.open("ab") as handle:
            handle.write(f"\n# changed in round {round_}\n".encode())


def du(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def git(root: Path, *args: str) -> str:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "b",
        "GIT_AUTHOR_EMAIL": "b@b",
        "GIT_COMMITTER_NAME": "b",
        "GIT_COMMITTER_EMAIL": "b@b",
    }
    return subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, text=True, env=env).stdout


def timed(function, *args):
    started = time.perf_counter()
    result = function(*args)
    return time.perf_counter() - started, result


def row(label: str, seconds: float, grown: int) -> str:
    return f"{label:<44} {seconds * 1000:>9.0f} ms {grown / 1e6:>9.2f} MB"


def bench_store(kind: str, root: Path, home: Path, changed: int) -> list[str]:
    store = locate(root, home)
    objects = store.git_dir / "objects"
    index = home / "index" / f"{kind}.index"
    rows = []
    before = du(objects)
    seconds, _ = timed(take_snapshot, store, index, "bench/1-before", 10 << 20, None)
    rows.append(row(f"{kind}: first snapshot", seconds, du(objects) - before))
    change(root, changed, 1)
    before = du(objects)
    seconds, _ = timed(take_snapshot, store, index, "bench/2-before", 10 << 20, None)
    rows.append(row(f"{kind}: snapshot after {changed} files changed", seconds, du(objects) - before))
    if kind == "git":
        change(root, changed, 2)
        before = du(objects)
        seconds, _ = timed(git, root, "stash", "create")
        rows.append(row(f"git: `git stash create` after {changed} changed", seconds, du(objects) - before))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--megabytes", type=int, default=200)
    parser.add_argument("--changed", type=int, default=10)
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="checkpoint-bench-"))
    try:
        home = work / "agent-home"
        repo, plain = work / "repo", work / "plain"
        print(f"generating {args.files:,} files, {args.megabytes} MB…", file=sys.stderr)
        generate(plain, args.files, args.megabytes * 1_000_000)
        shutil.copytree(plain, repo)
        git(repo, "init", "-q")
        git(repo, "add", "-A")
        git(repo, "commit", "-qm", "tree")
        print(f"{'':<44} {'time':>12} {'disk':>12}")
        for line in bench_store("git", repo, home, args.changed) + bench_store("plain", plain, home, args.changed):
            print(line)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
