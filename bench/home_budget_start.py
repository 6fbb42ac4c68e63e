"""What the home's disk budget costs a cold `agent exec`: the same run against a home of 20,000
session files, once with the budget check's stamp old (the start walks the home, as every start
did before) and once with it fresh (the start skips the walk), interleaved.

    .venv/bin/python bench/home_budget_start.py [--files 20000] [--pairs 7]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.home_budget import STAMP  # noqa: E402
from tests.fake_server import FakeModelServer, Reply  # noqa: E402


def fill(home: Path, files: int) -> None:
    for index in range(files):
        folder = home / "sessions" / "2025" / f"{index // 100 % 12 + 1:02d}" / f"{index // 100:03d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{index}.jsonl").write_text("x" * 200)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--pairs", type=int, default=7)
    args = parser.parse_args()
    home, work = Path(tempfile.mkdtemp()), Path(tempfile.mkdtemp())
    fill(home, args.files)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    with FakeModelServer() as server:
        env.update(
            PYTHONPATH=str(REPO),
            AGENT_HOME=str(home),
            AGENT_NO_DAEMON="1",
            OPENAI_BASE_URL=server.openai_base_url,
            OPENAI_API_KEY="test-key",
            NO_COLOR="1",
        )

        def run() -> float:
            server.script(Reply(text="hi"))
            start = time.perf_counter()
            argv = [sys.executable, "-m", "agent_cli", "exec", "--provider", "openai-chat", "-m", "test-model", "hi"]
            subprocess.run(argv, env=env, cwd=work, capture_output=True, check=True)
            return time.perf_counter() - start

        walked, skipped = [], []
        for _ in range(args.pairs):
            old = time.time() - 3600
            if (home / STAMP).exists():
                os.utime(home / STAMP, (old, old))
            walked.append(run())
            skipped.append(run())
    print(
        f"cold `agent exec`, {args.files:,} session files, {args.pairs} pairs, medians: "
        f"start walks the home {statistics.median(walked) * 1000:.0f} ms, "
        f"skips it {statistics.median(skipped) * 1000:.0f} ms "
        f"({statistics.median(skipped) / statistics.median(walked):.2f}x)"
    )


if __name__ == "__main__":
    main()
