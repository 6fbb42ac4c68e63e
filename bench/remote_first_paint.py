"""First paint of the TUI on a session in a host (`agent --remote`) beside the local TUI's, as a
person sees it: the real app in tmux, from the command starting to its composer on screen.

    .venv/bin/python bench/remote_first_paint.py [--rounds 7]

Cases, alternated in every round (a slow spell of the shared machine hits each alike), each a
fresh `agent` process against the fake model server:
- local: `agent` (a session opened in this process: the baseline);
- ws://: `agent --remote ws://127.0.0.1:PORT` with a token, against a running `agent app-server`
  (a new thread there);
- unix://: `agent --remote unix://`, the per-user host.
The screen is read every few milliseconds until the composer's placeholder shows. Medians are
printed, with each case's ratio to the local one.
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tests.conftest import provider_env  # noqa: E402
from tests.fake_server import FakeModelServer  # noqa: E402
from tests.tmux_terminal import TmuxTerminal, agent_command  # noqa: E402

TOKEN = "bench-first-paint-token"
SHOWN = "Ask anything"
MODEL = ["--provider", "openai-chat", "-m", "test-model"]
RUNS = itertools.count()


def first_paint(args: list[str], cwd: Path, env: dict[str, str]) -> float:
    start = time.perf_counter()
    command = agent_command(args) + "; sleep 60"  # what it said, if it ends, stays on screen
    name = f"first-paint-{next(RUNS)}"  # a tmux server of its own each time (one closing is never reused)
    terminal = TmuxTerminal(command, cwd, env, width=110, height=36, name=name)
    try:
        while SHOWN not in terminal.screen():
            if time.perf_counter() - start > 60:
                raise SystemExit(f"`agent {' '.join(args)}` showed no composer within 60 s:\n{terminal.screen()}")
            time.sleep(0.005)
        return time.perf_counter() - start
    finally:
        terminal.close()


def start_server(argv: list[str], cwd: Path, env: dict[str, str]) -> tuple[subprocess.Popen[str], str]:
    server = subprocess.Popen(
        [sys.executable, "-m", "agent_cli", "app-server", *MODEL, *argv],
        cwd=cwd,
        env={**os.environ, **env},
        stderr=subprocess.PIPE,
        text=True,
    )
    assert server.stderr is not None
    while line := server.stderr.readline():
        if line.startswith("agent app-server: listening on "):
            return server, line.split("listening on ", 1)[1].strip()
    raise SystemExit("the app-server did not start")


def main(rounds: int) -> None:
    home = Path(tempfile.mkdtemp(prefix="bench-first-paint-"))
    repo, runtime = home / "repo", home / "run"
    repo.mkdir()
    runtime.mkdir(mode=0o700)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    token_file = home / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    with FakeModelServer() as fake:
        env = {
            **provider_env(fake, "openai-chat"),
            "AGENT_HOME": str(home / "agent-home"),
            "XDG_RUNTIME_DIR": str(runtime),
            "AGENT_LSP_AUTODETECT": "0",
            "BENCH_TOKEN": TOKEN,
        }
        ws, ws_url = start_server(
            ["--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token", "--ws-token-file", str(token_file)],
            repo,
            env,
        )
        unix, _ = start_server(["--listen", "unix://"], repo, env)
        cases = {
            "local": [*MODEL],
            "ws://": ["--remote", ws_url, "--remote-auth-token-env", "BENCH_TOKEN"],
            "unix://": ["--remote", "unix://"],
        }
        try:
            for args in cases.values():  # one unmeasured start each: files cached, the servers' first thread made
                first_paint(args, repo, env)
            times: dict[str, list[float]] = {name: [] for name in cases}
            for _ in range(rounds):
                for name, args in cases.items():
                    times[name].append(first_paint(args, repo, env))
        finally:
            for server in (ws, unix):
                server.terminate()
                server.wait(timeout=30)
    load = os.getloadavg()[0]
    base = statistics.median(times["local"])
    print(f"load average {load:.1f}; {rounds} rounds, medians; first paint = the composer on screen (tmux)")
    print("| case | first paint | vs local |")
    print("|---|---|---|")
    for name, found in times.items():
        median = statistics.median(found)
        spread = f"{min(found) * 1000:.0f}-{max(found) * 1000:.0f}"
        print(f"| {name} | {median * 1000:.0f} ms ({spread}) | {median / base:.2f}x |")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    main(parser.parse_args().rounds)
