"""One tool round trip through `agent exec` against the fake server, next to `python -c pass`
(and, when given its path, Codex CLI against the same server), with the time broken down.

Run: python bench/exec_latency.py [--runs N] [--provider P] [--model M] [--codex PATH]
HOME is a temporary folder with a one-line profile, so the figures are the agent's own, not
the machine's login profile (bench/shell_overhead.py measures that). The model is a real name
by default (its window and tokenizer are known, as for a user) on the Responses API, Codex's
wire. Prints medians of N interleaved runs, all measured in this run: the bare interpreter, the
whole round trip and its steps (start-up until the first request reaches the server; the first
reply, the shell tool and the second request; the second reply until the process exits), the
same for `codex exec` with `--codex`, and the import time of one extra run under
`-X importtime`, with the part spent in the HTTP library and in any provider SDK.
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

IMPORT_LINE = re.compile(r"import time:\s+(\d+) \|\s+(\d+) \|( +)(\S+)")
STEPS = ("to first request", "reply 1 + tool + request 2", "reply 2 until exit")


def timed(argv: list[str], env: dict[str, str], cwd: str) -> tuple[float, float]:
    started = time.perf_counter()
    subprocess.run(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, check=True)
    return started, time.perf_counter()


def round_trip(server: FakeModelServer, argv: list[str], call: ToolCall, env: dict[str, str], cwd: str) -> dict[str, float]:
    arrivals: list[float] = []

    def reply(item: Reply):
        def answer(request) -> Reply:
            arrivals.append(time.perf_counter())
            return item
        return answer

    server.script(reply(Reply(tool_calls=[call])), reply(Reply(text="done")))
    started, ended = timed(argv, env, cwd)
    first, second = arrivals
    return {"total": ended - started, STEPS[0]: first - started, STEPS[1]: second - first, STEPS[2]: ended - second}


def import_times(server: FakeModelServer, argv: list[str], env: dict[str, str], cwd: str) -> dict[str, float]:
    """Seconds spent importing in one run (all top-level imports), and the HTTP library's and
    the provider SDKs' parts of it."""
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "true"})]), Reply(text="done"))
    done = subprocess.run([sys.executable, "-X", "importtime", *argv[1:]], env=env, cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, check=True)
    parts = {"all": 0.0, "httpx2": 0.0, "SDK": 0.0}
    for match in IMPORT_LINE.finditer(done.stderr):
        cumulative, depth, name = int(match.group(2)) / 1e6, len(match.group(3)), match.group(4)
        if depth == 1:
            parts["all"] += cumulative
            root = name.split(".")[0]
            if root in ("httpx2", "httpcore2"):
                parts["httpx2"] += cumulative
            elif root in ("openai", "anthropic"):
                parts["SDK"] += cumulative
    return parts


def codex_argv(codex: str, base_url: str) -> list[str]:
    provider = f'model_providers.bench={{name="bench",base_url="{base_url}",env_key="OPENAI_API_KEY",wire_api="responses"}}'
    return [codex, "exec", "--skip-git-repo-check", "-c", provider, "-c", "model_provider=bench", "-m", "gpt-5",
            "run true"]


def report(label: str, trips: list[dict[str, float]], base: float, against: float | None = None) -> float:
    total = statistics.median(trip["total"] for trip in trips)
    ratio = f"  ({total / base:.1f}x python -c pass" + (f", {total / against:.2f}x Codex)" if against else ")")
    print(f"{label + ':':36}{total * 1000:6.0f} ms{ratio}")
    for step in STEPS:
        print(f"{'  ' + step + ':':36}{statistics.median(trip[step] for trip in trips) * 1000:6.0f} ms")
    return total


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--provider", default="openai", help="openai (Responses, Codex's wire), openai-chat, anthropic")
    parser.add_argument("--model", default="gpt-5")
    parser.add_argument("--codex", help="path of a `codex` binary to measure against the same server")
    args = parser.parse_args()
    agent = [sys.executable, "-m", "agent_cli", "exec", "--provider", args.provider, "-m", args.model, "run true"]
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as home:
        Path(home, ".profile").write_text("export BENCH_PROFILE=1\n")  # not this machine's profile
        env = {
            **os.environ, "PYTHONPATH": str(REPO), "AGENT_HOME": home, "HOME": home, "CODEX_HOME": home,
            "NO_COLOR": "1", "OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "bench",
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed by pip: compiled bytecode
        ours = ToolCall("shell", {"command": "true"})
        codex = codex_argv(args.codex, server.openai_base_url) if args.codex else None
        codex_call = ToolCall("exec_command", {"cmd": "true"})
        round_trip(server, agent, ours, env, home)  # compiles what is not compiled yet
        baseline, trips, codex_trips = [], [], []
        for _ in range(args.runs):
            started, ended = timed([sys.executable, "-c", "pass"], env, home)
            baseline.append(ended - started)
            trips.append(round_trip(server, agent, ours, env, home))
            if codex:
                codex_trips.append(round_trip(server, codex, codex_call, env, home))
        imports = import_times(server, agent, env, home)
    base = statistics.median(baseline)
    print(f"python -c pass:                     {base * 1000:6.0f} ms (median of {args.runs})")
    codex_total = report("codex exec, one shell round trip", codex_trips, base) if codex else None
    report(f"agent exec ({args.provider}, {args.model})", trips, base, codex_total)
    print(f"imports in one run (-X importtime): {imports['all'] * 1000:6.0f} ms, of which httpx2 "
          f"{imports['httpx2'] * 1000:.0f} ms, provider SDKs {imports['SDK'] * 1000:.0f} ms")


if __name__ == "__main__":
    main()
