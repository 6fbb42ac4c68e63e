"""`agent app-server` against the fake model server: what a turn costs through a WebSocket beside
the same turn in-process, the memory of idle loaded threads, and five clients on one thread while
a 30 KB answer streams (every client must get every delta, in order).

Run: python bench/app_server.py [--turns N] [--threads N]

In-process means what the TUI does: `commands.conversation.submit` on a session of
`runtime.open_session`, in this interpreter. Through the server means a client of ours
(agent_cli/app_server/client.py) over `ws://127.0.0.1` with a token, from `turn/start` until
`turn/completed`. Through the TUI's client means what `agent --remote` does: a prompt submitted to
agent_cli/remote/conversation.py's RemoteConversation (the same `UserTurn` a local app submits),
its notifications read back as typed events until the turn's end. All run the same one-line
answer, interleaved, after a warm-up turn each.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.app_server.client import AppServerClient, thread_text  # noqa: E402
from agent_cli.commands.conversation import submit  # noqa: E402
from agent_cli.config import load_config  # noqa: E402
from agent_cli.operations import UserTurn  # noqa: E402
from agent_cli.remote.conversation import RemoteConversation  # noqa: E402
from agent_cli.runtime import open_session  # noqa: E402
from tests.fake_server import FakeModelServer, Reply  # noqa: E402

TOKEN = "bench-token"
ANSWER = "".join(f"line {n:04d} of a thirty kilobyte answer.\n" for n in range(750))  # 30 KB


def rss_kb(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


async def in_process_turns(fake: FakeModelServer, repo: Path, turns: int) -> list[float]:
    config = load_config(repo, ['model_provider="openai-chat"', 'model="test-model"'])
    session = open_session(replace(config, trust_repository=True), interactive=True)
    times = []
    for _ in range(turns + 1):
        start = time.perf_counter()
        async for _event in submit(session, "hello"):
            pass
        times.append(time.perf_counter() - start)
    await session.aclose()
    return times[1:]


async def server_turns(client: AppServerClient, thread_id: str, turns: int) -> list[float]:
    times = []
    for _ in range(turns + 1):
        start = time.perf_counter()
        turn = (await client.request("turn/start", {"threadId": thread_id, "input": thread_text("hello")}))["turn"]
        await client.notification(
            "turn/completed",
            lambda p, turn_id=turn["id"]: p["turn"]["id"] == turn_id,
            after=len(client.notifications) - 1,
        )
        times.append(time.perf_counter() - start)
    return times[1:]


async def conversation_turns(remote: RemoteConversation, turns: int) -> list[float]:
    times = []
    for _ in range(turns + 1):
        start = time.perf_counter()
        async for _event in remote.submit(UserTurn("hello")):
            pass
        times.append(time.perf_counter() - start)
    return times[1:]


async def fan_out(url: str, repo: Path, clients: int) -> tuple[float, bool]:
    watchers = [await AppServerClient.connect(url, token=TOKEN) for _ in range(clients)]
    for watcher in watchers:
        await watcher.initialize()
    thread_id = (await watchers[0].request("thread/start", {"cwd": str(repo)}))["thread"]["id"]
    for watcher in watchers[1:]:
        await watcher.request("thread/resume", {"threadId": thread_id})
    start = time.perf_counter()
    await watchers[0].request("turn/start", {"threadId": thread_id, "input": thread_text("long")})
    for watcher in watchers:
        await watcher.notification("turn/completed", timeout=120)
    elapsed = time.perf_counter() - start
    whole = all("".join(p["delta"] for p in w.seen("item/agentMessage/delta")) == ANSWER for w in watchers)
    for watcher in watchers:
        await watcher.close()
    return elapsed, whole


async def main(turns: int, idle_threads: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-app-server-"))
    repo = home / "repo"
    repo.mkdir()
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    token_file = home / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)

    def reply(request) -> Reply:
        text = str(request.body.get("messages", [{}])[-1].get("content", ""))
        return Reply(text=ANSWER, chunk_size=8) if "long" in text else Reply(text="ok")

    with FakeModelServer(fallback=reply) as fake:
        env = {**os.environ, "AGENT_HOME": str(home / "agent-home"), "OPENAI_BASE_URL": fake.openai_base_url,
               "OPENAI_API_KEY": "x", "AGENT_LSP_AUTODETECT": "0"}  # fmt: skip
        os.environ.update(env)
        command = [sys.executable, "-m", "agent_cli", "app-server", "--provider", "openai-chat", "-m", "test-model",
                   "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token", "--ws-token-file", str(token_file)]  # fmt: skip
        server = subprocess.Popen(command, cwd=repo, env=env, stderr=subprocess.PIPE, text=True)
        assert server.stderr is not None
        url = ""
        while not url:
            line = server.stderr.readline()
            if not line:
                raise SystemExit("the server did not start")
            if line.startswith("agent app-server: listening on "):
                url = line.split("listening on ", 1)[1].strip()
        try:
            started_rss = rss_kb(server.pid)
            client = await AppServerClient.connect(url, token=TOKEN)
            await client.initialize()
            thread_id = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]["id"]
            tui_client = await AppServerClient.connect(url, token=TOKEN)
            await tui_client.initialize()
            conversation = await RemoteConversation.start(tui_client, repo, {})
            local, remote, tui = [], [], []
            for _ in range(turns):  # interleaved, one turn each at a time
                local += await in_process_turns(fake, repo, 1)
                remote += await server_turns(client, thread_id, 1)
                tui += await conversation_turns(conversation, 1)
            await conversation.aclose()
            two_threads_rss = rss_kb(server.pid)
            for _ in range(idle_threads - 2):  # two are loaded already
                other = (await client.request("thread/start", {"cwd": str(repo)}))["thread"]["id"]
                await server_turns(client, other, 0)
            many_rss = rss_kb(server.pid)
            await client.close()
            single, _ = await fan_out(url, repo, 1)
            five, whole = await fan_out(url, repo, 5)
        finally:
            server.terminate()
            server.wait(timeout=30)
    load = os.getloadavg()[0]
    local_ms, remote_ms = statistics.median(local) * 1000, statistics.median(remote) * 1000
    print(f"load average {load:.1f}; {turns} turns each, medians")
    print("| | ms per turn |")
    print("|---|---|")
    print(f"| in-process (submit) | {local_ms:.1f} |")
    print(f"| through ws:// (turn/start to turn/completed) | {remote_ms:.1f} |")
    print(f"| difference | {remote_ms - local_ms:+.1f} ({remote_ms / local_ms:.2f}x) |")
    tui_ms = statistics.median(tui) * 1000
    print(
        f"| through ws:// with the TUI's client (RemoteConversation.submit) | {tui_ms:.1f} ({tui_ms - local_ms:+.1f}) |"
    )
    print()
    per_thread = (many_rss - two_threads_rss) / max(1, idle_threads - 2)
    print(f"server RSS: {started_rss / 1024:.1f} MB at start, {two_threads_rss / 1024:.1f} MB with two threads, "
          f"{many_rss / 1024:.1f} MB with {idle_threads} idle threads ({per_thread / 1024:.2f} MB per idle thread)")  # fmt: skip
    print(f"30 KB answer in {len(ANSWER) // 8} deltas: one client {single * 1000:.0f} ms, five clients "
          f"{five * 1000:.0f} ms ({five / single:.2f}x); every client got every delta in order: {whole}")  # fmt: skip


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=20)
    parser.add_argument("--threads", type=int, default=20)
    options = parser.parse_args()
    asyncio.run(main(options.turns, options.threads))
