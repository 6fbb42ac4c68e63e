"""One tool round trip through `agent exec` on each wire against the fake server, next to
`python -c pass` and, when given their paths, the peers on their own wire: Codex CLI on the
Responses API, Claude Code on Anthropic Messages.

Run: python bench/exec_latency.py [--runs N] [--provider P ...] [--model M] [--codex PATH] [--claude PATH]
(the peers, e.g.: `npm install --prefix /tmp/peers @openai/codex @anthropic-ai/claude-code`, then
`--codex /tmp/peers/node_modules/.bin/codex --claude /tmp/peers/node_modules/.bin/claude`)
`--provider` takes one or more of openai (Responses), openai-chat (Chat Completions) and anthropic
(Messages); all three by default. HOME is a temporary folder with a one-line profile, so the
figures are the clients' own, not the machine's login profile (bench/shell_overhead.py measures
that). The models are real names (their window and tokenizer are known, as for a user). Every
client runs once before the measured runs (bytecode compiled, first-run files written, as for
someone who used it before), then the runs are interleaved: each round runs the bare interpreter,
then every client once. Each wire measures `agent exec` twice: cold (`--no-daemon`: what the first run, with no warm
server yet, pays) and warm (forked by the bench's own warm server, started by a first run under a
private XDG_RUNTIME_DIR and stopped at the end; its CPU, and that of the runs it forked, is read
from /proc, as they are not the bench's children). Prints the load average, then one table with the medians per wire: the
whole round trip and its steps (start-up until the first request reaches the server; the first
reply, the shell tool and the second request; the second reply until the process exits) and the
CPU time the run took (the process and those it waited for: what a loaded machine stretches the
times by), ours over the peer's; then the CPU time a fresh interpreter takes to import each
provider SDK alone (measured in the same rounds), the largest part of our start-up.

Claude Code runs in print mode (`-p`) with its Bash tool allowed and its non-essential traffic
(telemetry, error reports, update checks) switched off; the fake server answers whatever else it
asks (a `HEAD /` it sends to warm the connection gets a quick 501).
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from tests.fake_server import FakeModelServer, RecordedRequest, Reply, ToolCall  # noqa: E402

STEPS = ("to first request", "reply 1 + tool + request 2", "reply 2 until exit")
WIRES = {  # provider: (wire, default model)
    "openai": ("Responses", "gpt-5"),
    "openai-chat": ("Chat Completions", "gpt-5"),
    "anthropic": ("Anthropic Messages", "claude-sonnet-4-5"),
}
SDK_OF = {"openai": "openai", "openai-chat": "openai", "anthropic": "anthropic"}
PEER_ENV = {  # Claude Code: no telemetry, error reports or update checks, only the model requests
    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    "DISABLE_TELEMETRY": "1",
    "DISABLE_AUTOUPDATER": "1",
    "DISABLE_ERROR_REPORTING": "1",
}


def tool_output_sent(request: RecordedRequest) -> bool:
    """Whether the second request carries a successful tool result, whatever the wire: proof that the
    client really ran the shell tool before it asked again."""
    body = request.body if isinstance(request.body, dict) else {}
    if request.protocol == "responses":
        return any(item.get("type") == "function_call_output" for item in body.get("input", []))
    if request.protocol == "chat":
        return any(message.get("role") == "tool" for message in body.get("messages", []))
    blocks = [
        block
        for message in body.get("messages", [])
        if isinstance(message.get("content"), list)
        for block in message["content"]
    ]
    return any(block.get("type") == "tool_result" and not block.get("is_error") for block in blocks)


@dataclass
class Client:
    """One program measured on one wire: how it is started and the shell call the fake model asks of it."""

    label: str
    argv: list[str]
    call: ToolCall
    env: dict[str, str] = field(default_factory=dict)
    warm: bool = False
    trips: list[dict[str, float]] = field(default_factory=list)

    def median(self, step: str) -> float:
        return statistics.median(trip[step] for trip in self.trips)


def round_trip(
    server: FakeModelServer, client: Client, env: dict[str, str], cwd: str, daemon: WarmServer | None = None
) -> dict[str, float]:
    arrivals: list[float] = []
    requests: list[RecordedRequest] = []

    def reply(item: Reply):
        def answer(request: RecordedRequest) -> Reply:
            arrivals.append(time.perf_counter())
            requests.append(request)
            return item

        return answer

    server.script(reply(Reply(tool_calls=[client.call])), reply(Reply(text="done")))
    daemon = daemon if client.warm else None
    cpu_before = cpu_of_children() + (daemon.cpu() if daemon else 0.0)
    started = time.perf_counter()
    done = subprocess.run(
        client.argv, env={**env, **client.env}, cwd=cwd, stdin=subprocess.DEVNULL, capture_output=True, text=True
    )
    ended = time.perf_counter()
    cpu = cpu_of_children() + (daemon.cpu() if daemon else 0.0) - cpu_before
    if done.returncode != 0 or len(arrivals) != 2 or not tool_output_sent(requests[1]):
        raise SystemExit(
            f"{client.label}: not one shell round trip (exit {done.returncode}, {len(arrivals)} "
            f"requests): {done.stderr[-2000:] or done.stdout[-2000:]}"
        )
    first, second = arrivals
    return {
        "total": ended - started,
        STEPS[0]: first - started,
        STEPS[1]: second - first,
        STEPS[2]: ended - second,
        "CPU": cpu,
    }


def cpu_of_children() -> float:
    """CPU seconds (user + system) of the child processes ended so far, theirs included: what a run
    costs the machine, which the load of other work does not change much."""
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def sdk_import_cpu(sdk: str, env: dict[str, str], cwd: str) -> float:
    """CPU seconds a fresh interpreter takes to import ``sdk``, with the collector paused as exec does."""
    code = f"import gc, time\ngc.disable()\nstarted = time.process_time()\nimport {sdk}\nprint(time.process_time() - started)"
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=cwd, capture_output=True, text=True, check=True)
    return float(done.stdout)


def ours(provider: str, model: str, warm: bool) -> Client:
    argv = [sys.executable, "-m", "agent_cli", "exec", "--provider", provider, "-m", model, "run true"]
    if not warm:
        argv.insert(4, "--no-daemon")  # what the first run of a session pays: no server yet
    label = f"agent exec {'warm' if warm else 'cold'} ({model})"
    return Client(label, argv, ToolCall("shell", {"command": "true"}), warm=warm)


class WarmServer:
    """The bench's own warm server (its socket under a private XDG_RUNTIME_DIR): its CPU time and that
    of the runs it forked and reaped are read from /proc, since they are not the bench's children."""

    def __init__(self, runtime: str) -> None:
        self.runtime = runtime
        self.pid: int | None = None

    def find(self) -> int | None:
        for entry in Path("/proc").iterdir():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if b"agent_cli.warm.server" in argv and any(self.runtime.encode() in arg for arg in argv):
                self.pid = int(entry.name)
        return self.pid

    def cpu(self) -> float:
        """utime + stime + cutime + cstime of the server, in seconds (0 before it runs)."""
        if self.pid is None:
            return 0.0
        fields = (Path("/proc") / str(self.pid) / "stat").read_text().rsplit(")", 1)[1].split()
        return sum(int(value) for value in fields[11:15]) / os.sysconf("SC_CLK_TCK")

    def wait_listening(self, within: float) -> None:
        deadline = time.monotonic() + within
        while time.monotonic() < deadline:
            sockets = list(Path(self.runtime).glob("agent-cli-*/warm-*.sock"))
            if self.find() and sockets:
                with socket.socket(socket.AF_UNIX) as probe:
                    if probe.connect_ex(str(sockets[0])) == 0:
                        return
            time.sleep(0.1)
        raise SystemExit("the warm server did not start")

    def stop(self) -> None:
        if self.pid is not None:
            try:
                os.kill(self.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


def codex(path: str, base_url: str, model: str) -> Client:
    provider = (
        f'model_providers.bench={{name="bench",base_url="{base_url}",env_key="OPENAI_API_KEY",wire_api="responses"}}'
    )
    argv = [
        path,
        "exec",
        "--skip-git-repo-check",
        "-c",
        provider,
        "-c",
        "model_provider=bench",
        "-m",
        model,
        "run true",
    ]
    return Client("codex exec", argv, ToolCall("exec_command", {"cmd": "true"}))


def claude(path: str, model: str) -> Client:
    argv = [path, "-p", "run true", "--model", model, "--allowedTools", "Bash"]
    return Client("claude -p", argv, ToolCall("Bash", {"command": "true", "description": "Run true"}), PEER_ENV)


def print_table(providers: list[str], lineup: dict[str, list[Client]], imports: dict[str, list[float]]) -> None:
    print(
        f"{'wire':20}{'client':40}{'total':>7}{'to 1st request':>16}{'reply+tool+request':>20}{'to exit':>9}"
        f"{'CPU':>7}  ms"
    )
    for provider in providers:
        clients = lineup[provider]
        for at, client in enumerate(clients):
            steps = "".join(
                f"{client.median(step) * 1000:{width}.0f}" for step, width in zip((*STEPS, "CPU"), (16, 20, 9, 7))
            )
            print(
                f"{WIRES[provider][0] if at == 0 else '':20}{client.label:40}{client.median('total') * 1000:7.0f}{steps}"
            )
        peers = [client for client in clients if not client.label.startswith("agent exec")]
        for mine in [client for client in clients if client.label.startswith("agent exec")] if peers else []:
            peer = peers[0]
            ratios = [mine.median(step) / peer.median(step) for step in ("total", *STEPS, "CPU")]
            label = f"{mine.label.split()[2]} / {peer.label}"
            print(
                f"{'':20}{label:40}{ratios[0]:6.2f}x{ratios[1]:15.2f}x{ratios[2]:19.2f}x"
                f"{ratios[3]:8.2f}x{ratios[4]:6.2f}x"
            )
    cpu = ", ".join(f"{sdk} {statistics.median(times) * 1000:.0f} ms" for sdk, times in imports.items())
    print(f"importing the SDK alone (CPU, collector paused as in exec): {cpu}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument(
        "--provider",
        nargs="+",
        choices=list(WIRES),
        default=list(WIRES),
        help="the wires to measure: openai (Responses), openai-chat, anthropic",
    )
    parser.add_argument(
        "--model", help="one model name for every wire (default: gpt-5, or claude-sonnet-4-5 on anthropic)"
    )
    parser.add_argument("--codex", help="path of a `codex` binary, measured on the Responses wire")
    parser.add_argument("--claude", help="path of a Claude Code `claude` binary, measured on the Anthropic wire")
    args = parser.parse_args()
    with (
        FakeModelServer() as server,
        tempfile.TemporaryDirectory() as home,
        tempfile.TemporaryDirectory(prefix="xdg-") as runtime,
    ):
        Path(home, ".profile").write_text("export BENCH_PROFILE=1\n")  # not this machine's profile
        env = {
            **os.environ,
            "PYTHONPATH": str(REPO),
            "AGENT_HOME": home,
            "HOME": home,
            "CODEX_HOME": home,
            "NO_COLOR": "1",
            "XDG_RUNTIME_DIR": runtime,  # the bench's own warm server
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": "bench",
            "ANTHROPIC_BASE_URL": server.base_url,
            "ANTHROPIC_API_KEY": "bench",
        }
        env.pop("PYTHONDONTWRITEBYTECODE", None)  # as installed by pip: compiled bytecode
        env.pop("AGENT_NO_DAEMON", None)
        lineup: dict[str, list[Client]] = {}
        for provider in args.provider:
            model = args.model or WIRES[provider][1]
            lineup[provider] = [ours(provider, model, warm=False), ours(provider, model, warm=True)]
            if provider == "openai" and args.codex:
                lineup[provider].append(codex(args.codex, server.openai_base_url, model))
            if provider == "anthropic" and args.claude:
                lineup[provider].append(claude(args.claude, model))
        everyone = [client for clients in lineup.values() for client in clients]
        load_before = os.getloadavg()
        daemon = WarmServer(runtime)
        try:
            measure(args, server, everyone, env, home, daemon, baseline := [], imports := {})
        finally:
            daemon.stop()
        load_after = os.getloadavg()
    print(
        f"One shell round trip against the fake server; medians of {args.runs} interleaved runs; load average "
        f"(1, 5, 15 min) {fmt(load_before)} at the start, {fmt(load_after)} at the end; {os.cpu_count()} CPUs; "
        f"python -c pass {statistics.median(baseline) * 1000:.0f} ms"
    )
    print(
        "cold: `--no-daemon`, as the first run (no server yet) starts; warm: forked by the warm server, its CPU "
        "read from /proc (the server's and its reaped children's)"
    )
    print_table(args.provider, lineup, imports)


def fmt(load: tuple[float, float, float]) -> str:
    return "/".join(f"{value:.2f}" for value in load)


def measure(args, server, everyone, env, home, daemon, baseline, imports) -> None:
    for client in everyone:
        round_trip(server, client, env, home)  # compiles what is not compiled yet, writes first-run files
        if client.warm and daemon.pid is None:  # its first run started the server: wait until it listens
            daemon.wait_listening(within=120)
    imports.update({SDK_OF[provider]: [] for provider in args.provider})
    for _ in range(args.runs):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], env=env, cwd=home, check=True)
        baseline.append(time.perf_counter() - started)
        for client in everyone:
            client.trips.append(round_trip(server, client, env, home, daemon))
        for sdk, times in imports.items():
            times.append(sdk_import_cpu(sdk, env, home))


if __name__ == "__main__":
    main()
