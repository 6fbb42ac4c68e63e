"""One tool round trip through `agent exec` against the fake server, next to `python -c pass`.

Run: python bench/exec_latency.py [--runs N]
Prints the median wall time of each and the ratio, all measured in this run.
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

from tests.fake_server import FakeModelServer, Reply, ToolCall  # noqa: E402


def timed(argv: list[str], env: dict[str, str], cwd: str) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as home:
        env = {
            **os.environ, "PYTHONPATH": str(REPO), "AGENT_HOME": home, "NO_COLOR": "1",
            "OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "bench",
        }
        agent = [sys.executable, "-m", "agent_cli", "exec", "--provider", "openai-chat", "-m", "bench", "run true"]
        baseline, round_trips = [], []
        for _ in range(runs):
            baseline.append(timed([sys.executable, "-c", "pass"], env, home))
            server.script(Reply(tool_calls=[ToolCall("shell", {"command": "true"})]), Reply(text="done"))
            round_trips.append(timed(agent, env, home))
    base, agent_time = statistics.median(baseline), statistics.median(round_trips)
    print(f"python -c pass:                    {base * 1000:7.0f} ms (median of {runs})")
    print(f"agent exec, one shell round trip:  {agent_time * 1000:7.0f} ms (median of {runs})")
    print(f"ratio:                             {agent_time / base:7.1f}x")


if __name__ == "__main__":
    main()
