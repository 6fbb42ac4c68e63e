"""What the sandbox's allow-list network costs (agent_cli/network/), under each mechanism here.

1. A command that uses no network: `true` in the sandbox with the network off, next to the same
   in allow-list mode (its own network namespace and a bridge to the proxy), runs alternated.
2. The first request: one HTTP GET timed inside the sandboxed command, from before it connects
   to the end of the answer, through the proxy by an allowed name (the proxy resolves it to a
   loopback origin) next to the same GET straight to the origin (network_access = true).

Run: python bench/network_proxy_cost.py [--runs N]
Prints the medians and minimums of each, measured in this run, and the median of the differences
between runs made one after the other.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.network.domains import parse_entry  # noqa: E402
from agent_cli.network.gate import NetworkGate  # noqa: E402
from agent_cli.network.lists import NetworkLists  # noqa: E402
from agent_cli.network.proxy import ProxyServer  # noqa: E402
from agent_cli.sandbox.network import proxy_env  # noqa: E402
from agent_cli.sandbox.policy import SandboxPolicy, command_argv, proxy_route_works, working_mechanisms  # noqa: E402
from tests.network_helpers import serve_origin  # noqa: E402

GET = """
import socket, sys, time
host, port, via = sys.argv[1], int(sys.argv[2]), sys.argv[3]
started = time.perf_counter()
if via == "proxy":
    sock = socket.create_connection(("127.0.0.1", 3128))
    sock.sendall(f"GET http://{host}:{port}/ HTTP/1.1\\r\\nHost: {host}:{port}\\r\\n\\r\\n".encode())
else:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.sendall(f"GET / HTTP/1.1\\r\\nHost: {host}:{port}\\r\\nConnection: close\\r\\n\\r\\n".encode())
answer = b""
while data := sock.recv(65536):
    answer += data
assert b"hello from origin" in answer, answer
print(f"{(time.perf_counter() - started) * 1000:.3f}")
"""


def timed(argv: list[str], env: dict[str, str] | None = None) -> tuple[float, str]:
    failure = ""
    for _ in range(3):  # a host socket that vanished between the scan and bubblewrap's mount fails a run
        started = time.perf_counter()
        done = subprocess.run(argv, capture_output=True, text=True, env=env, start_new_session=True, timeout=60)
        elapsed = time.perf_counter() - started
        if done.returncode == 0:
            return elapsed * 1000, done.stdout
        failure = done.stderr
    raise AssertionError(failure)


async def bench(mechanism: str, runs: int, work: Path) -> None:
    import os

    lists = NetworkLists(allowed=(parse_entry("origin.test", "bench"),), hosts={"origin.test": "127.0.0.1"})
    gate = NetworkGate(lists)
    gate.loop = asyncio.get_running_loop()
    proxy = ProxyServer(gate, work / "run")
    proxy.start()
    try:
        off = SandboxPolicy.create("workspace-write", work, [])
        listed = replace(off, network_proxy=proxy.route)
        everything = SandboxPolicy.create("workspace-write", work, [], network_access=True)
        env = {**os.environ, **proxy_env(proxy.route, proxy.token)}
        quiet, proxied = [], []
        for _ in range(runs):  # alternated, so that the machine's load falls on both alike
            quiet.append(timed(command_argv(["true"], off, mechanism))[0])
            proxied.append(timed(command_argv(["true"], listed, mechanism), env)[0])
        script = work / "get.py"
        script.write_text(GET)
        with serve_origin() as origin:
            through, direct = [], []
            for _ in range(runs):
                get = [sys.executable, str(script), "origin.test", str(origin.port)]
                through.append(float(timed(command_argv([*get, "proxy"], listed, mechanism), env)[1]))
                direct.append(float(timed(command_argv([*get, "direct"], everything, mechanism))[1]))
    finally:
        proxy.close()
    report(mechanism, "`true`", "with the network off", quiet, "in allow-list mode", proxied)
    report(mechanism, "first GET", "direct", direct, "through the proxy", through)


def report(mechanism: str, what: str, base_name: str, base: list[float], other_name: str, other: list[float]) -> None:
    """Medians, minimums (the least disturbed runs) and the median of the paired differences."""
    paired = statistics.median(b - a for a, b in zip(base, other, strict=True))
    print(
        f"{mechanism}: {what} median {statistics.median(base):.2f} ms {base_name}, "
        f"{statistics.median(other):.2f} ms {other_name}; min {min(base):.2f} vs {min(other):.2f} ms; "
        f"paired difference {paired:+.2f} ms"
    )


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=30)
    args = parser.parse_args()
    mechanisms = [name for name in working_mechanisms() if proxy_route_works(name)]
    if not mechanisms:
        sys.exit("no sandbox mechanism here can give commands a network namespace")
    with tempfile.TemporaryDirectory() as work:
        for mechanism in mechanisms:
            await bench(mechanism, args.runs, Path(work))


if __name__ == "__main__":
    asyncio.run(main())
