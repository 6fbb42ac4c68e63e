"""Time to the first model request with 0 and with 3 stdio MCP servers (one slow to start).

Run: python bench/mcp_startup.py [--runs N] [--slow SECONDS]

A real Session sends one prompt to the fake model server, which answers at once. Measured, each
the median of N runs in this process:
- no server: the baseline;
- 3 servers started with the prompt ("cold"): the first request waits for all of them, so this
  is about the slowest server's start (the SDK import, then each server's own start-up);
- 3 servers already ready (started in the background while the user types, as the TUI and
  `agent exec` do): what they add to the first request. Target: < 0.5 s.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli import events as ev  # noqa: E402
from agent_cli.commands.conversation import submit  # noqa: E402
from agent_cli.config import load_config  # noqa: E402
from agent_cli.runtime import open_session  # noqa: E402
from tests.fake_server import FakeModelServer, Reply  # noqa: E402

DEMO = [sys.executable, "-m", "tests.mcp_servers.demo_server"]


def servers_config(slow: float) -> str:
    tables = []
    for name, extra in (("one", []), ("two", []), ("slow", ["--start-delay", str(slow)])):
        tables.append(
            f"[mcp_servers.{name}]\ncommand = {json.dumps(DEMO[0])}\nargs = {json.dumps([*DEMO[1:], *extra])}\n"
            f"cwd = {json.dumps(str(REPO))}\nstartup_timeout_sec = 60\n"
        )
    return "\n".join(tables)


async def first_request(server: FakeModelServer, home: Path, cwd: Path, config_text: str, warm: bool) -> float:
    (home / "config.toml").write_text(config_text)
    session = open_session(load_config(cwd, ['model_provider="openai-chat"', 'model="bench"']), interactive=False)
    session.start_mcp()
    if warm and session.mcp is not None:  # the servers got ready while the user was typing
        await session.mcp.manager.wait_started()
    server.script(Reply(text="ok"))
    started = time.perf_counter()
    async for event in submit(session, "hi"):
        if isinstance(event, ev.TokenCount):  # the first (and only) response arrived
            elapsed = time.perf_counter() - started
    await session.aclose()
    return elapsed


async def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--slow", type=float, default=1.0, help="start-up delay of the slow server, seconds")
    args = parser.parse_args()
    with FakeModelServer() as server, tempfile.TemporaryDirectory() as tmp:
        home, cwd = Path(tmp) / "home", Path(tmp) / "work"
        home.mkdir()
        cwd.mkdir()
        os.environ.update(AGENT_HOME=str(home), OPENAI_BASE_URL=server.openai_base_url, OPENAI_API_KEY="bench")
        await first_request(server, home, cwd, "", warm=False)  # import the HTTP library once, outside the timing
        timings: dict[str, list[float]] = {"none": [], "cold": [], "warm": []}
        for _ in range(args.runs):
            timings["none"].append(await first_request(server, home, cwd, "", warm=False))
            timings["cold"].append(await first_request(server, home, cwd, servers_config(args.slow), warm=False))
            timings["warm"].append(await first_request(server, home, cwd, servers_config(args.slow), warm=True))
    none, cold, warm = (statistics.median(timings[key]) for key in ("none", "cold", "warm"))
    print(f"no MCP server:                          {none * 1000:7.0f} ms (median of {args.runs})")
    print(f"3 servers, started with the prompt:     {cold * 1000:7.0f} ms (one starts {args.slow:g} s late)")
    print(f"3 servers, ready before the prompt:     {warm * 1000:7.0f} ms")
    print(
        f"ready servers add:                      {(warm - none) * 1000:7.0f} ms (target < 500 ms); ratio {warm / none:.2f}x"
    )


if __name__ == "__main__":
    asyncio.run(main())
