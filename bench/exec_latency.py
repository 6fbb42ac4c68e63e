"""One tool round trip through `agent exec` against the fake server, next to `python -c pass`,
with the time broken down into its steps.

Run: python bench/exec_latency.py [--runs N]
HOME is a temporary folder with a one-line profile, so the figures are the agent's own, not
the machine's login profile (bench/shell_overhead.py measures that). Prints medians of N runs, all measured in this run: the bare interpreter, the whole round trip,
and its steps (start-up until the first request reaches the server; the first reply, the shell
tool and the second request; the second reply until the process exits), plus the import time of
one extra run under `-X importtime` (the provider SDK's share apart).
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fake_server import FakeModelServer, Reply, ToolCall  # noqa: E402

AGENT = [sys.executable, "-m", "agent_cli", "exec", "--provider", "openai-chat", "-m", "bench", "run true"]
IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)")


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return started, time.perf_counter()


def round_trip(server: FakeModelServer, env: dict[str, str], cwd: str) -> dict[str, float]:
    arrivals: list[float] = []

    def reply(item: Reply):
        def answer(request) -> Reply:
            arrivals.append(time.perf_counter())
            return item
        return answer

    server.script(reply(Reply(tool_calls=[ToolCall("shell", {"command": "true"})])), reply(Reply(text="done")))
    started, ended = timed(AGENT, env, cwd)
    first, second = arrivals
    return {"total": ended - started, "to first request": first - started,
            "reply 1 + tool + request 2": second - first, "reply 2 until exit": ended - second}


def import_times(server: FakeModelServer, env: dict[str, str], cwd: str) -> tuple[float, float]:
    """Seconds spent importing in one run (all top-level imports), and the SDK's part of it."""
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "true"})]), Reply(text="done"))
    done = subprocess.run([sys.executable, "-X", "importtime", *AGENT[1:]], env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True)
    total = sdk = 0
    for match in IMPORT_LINE.finditer(done.stderr):
        cumulative, depth, name = int(match.group(2)), len(match.group(3)), match.group(4)
        if depth == 1:
            total += cumulative
            if name.split(".")[0] in ("openai", "anthropic"):
                sdk += cumulative
    return total / 1e6, sdk / 1e6


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as home:
        Path(home, ".profile").write_text("export BENCH_PROFILE=1\n")  # not this machine's profile
        env = {
            **os.environ, "PYTHONPATH": str(REPO), "AGENT_HOME": home, "HOME": home, "NO_COLOR": "1",
            "OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "bench",
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed by pip: compiled bytecode
        round_trip(server, env, home)  # compiles what is not compiled yet
        baseline, trips = [], []
        for _ in range(runs):
            started, ended = timed([sys.executable, "-c", "pass"], env, home)
            baseline.append(ended - started)
            trips.append(round_trip(server, env, home))
        imports, sdk = import_times(server, env, home)
    base = statistics.median(baseline)
    print(f"python -c pass:                     {base * 1000:6.0f} ms (median of {runs})")
    for step in trips[0]:
        value = statistics.median(trip[step] for trip in trips)
        label = "agent exec, one shell round trip" if step == "total" else f"  {step}"
        print(f"{label + ':':36}{value * 1000:6.0f} ms" + (f"  ({value / base:.1f}x python -c pass)" if step == "total" else ""))
    print(f"imports in one run (-X importtime): {imports * 1000:6.0f} ms, of which the SDK {sdk * 1000:.0f} ms")


if __name__ == "__main__":
    main()
