"""How long Esc takes to stop a streamed answer, as a person sees it: the real TUI in tmux.

    .venv/bin/python bench/tui_interrupt.py [--kb 30] [--rate 800] [--rounds 5] [--after 8] [--compare TREE]

The fake model server streams KB of markdown (headings, lists, code, tables) at RATE characters
a second on the Anthropic wire and on the Chat Completions wire. ``--after`` seconds into the
answer, Escape is sent to the pane as a terminal sends it; then the pane is read every few
milliseconds until "interrupted" shows (the activity line's "Interrupted", or the transcript's
notice "interrupted by the user"). Also measured: how long text kept appearing after the
key (the last time the answer's lines changed before "interrupted" showed).

The baseline, in the same run and on the same wires: Esc during a shell command (`sleep 30`),
where nothing streams. With ``--compare TREE`` (another checkout, e.g. main's) every case runs
with that tree's agent too. Each case is a fresh agent; the cases alternate, so a slow spell of the
shared machine hits every case. Medians are printed, with the ratio to the baseline. Textual
reads a lone Escape only after 100 ms (ESCDELAY, waiting for the rest of a key sequence), in
every case alike.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.tui_stream import markdown_document  # noqa: E402
from tests.conftest import provider_env  # noqa: E402
from tests.fake_server import FakeModelServer, Reply, ToolCall  # noqa: E402
from tests.tmux_terminal import TmuxTerminal, agent_command  # noqa: E402

WIRES = ("anthropic", "openai-chat")
CHUNK = 16  # characters per streamed delta
SHOWN = "interrupted"


def answer_lines(screen: str) -> list[str]:
    """The transcript's text lines (what may still be growing), without the status lines."""
    return [line for line in screen.splitlines()[:-6] if line.strip()]


def one_run(
    server: FakeModelServer, home: Path, wire: str, streaming: bool, tree: str, args: argparse.Namespace
) -> tuple[float, float]:
    """(seconds from Esc to "interrupted" on screen, seconds text kept changing after Esc)."""
    if streaming:
        document = markdown_document(args.kb)
        server.script(Reply(text=document, chunk_size=CHUNK, delay=CHUNK / args.rate))
        started = "Section 1"
    else:
        server.script(Reply(tool_calls=[ToolCall("shell", {"command": "sleep 30"})]))
        started = "sleep 30"
    work = Path(tempfile.mkdtemp(dir=home))
    env = {"AGENT_HOME": str(home / "agent-home"), "HOME": str(home), **provider_env(server, wire)}
    if tree:  # the other checkout's agent
        env["PYTHONPATH"] = tree
    argv = ["--provider", wire, "-m", "bench-model", "-s", "danger-full-access", "-a", "never", "go"]
    terminal = TmuxTerminal(agent_command(argv), work, env, name="bench-esc")
    try:
        terminal.wait_for_text(started, within=120)
        time.sleep(args.after if streaming else 1.0)
        before = terminal.screen()
        pressed = time.perf_counter()
        terminal.keys("Escape")
        last_change = pressed
        lines = answer_lines(before)
        while True:
            screen = terminal.screen()
            now = time.perf_counter()
            if SHOWN in screen.lower():  # the activity line's "Interrupted", or the notice
                return now - pressed, last_change - pressed
            if answer_lines(screen) != lines:
                lines, last_change = answer_lines(screen), now
            if now - pressed > 30:
                raise RuntimeError(f"no {SHOWN!r} 30 s after Esc ({wire})")
            time.sleep(0.005)
    finally:
        terminal.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=30, help="size of the streamed answer")
    parser.add_argument("--rate", type=float, default=800.0, help="characters a second")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--after", type=float, default=8.0, help="seconds into the answer when Esc is pressed")
    parser.add_argument("--compare", default="", help="another checkout whose agent runs every case too")
    args = parser.parse_args()
    load = os.getloadavg()
    print(
        f"Esc -> {SHOWN!r} on screen, {args.kb} KB of markdown at {args.rate:.0f} characters/s, Esc after "
        f"{args.after:g} s; {args.rounds} rounds; load average {load[0]:.1f} on {os.cpu_count()} CPUs"
    )
    home = Path(tempfile.mkdtemp(prefix="agent-bench-esc-"))
    trees = ["", str(Path(args.compare).resolve())] if args.compare else [""]
    results: dict[tuple[str, str, bool], list[tuple[float, float]]] = {}
    with FakeModelServer() as server:
        for round_ in range(args.rounds):
            for wire in WIRES:
                for tree in trees if round_ % 2 == 0 else trees[::-1]:
                    for streaming in (True, False) if round_ % 2 == 0 else (False, True):
                        seconds = one_run(server, home, wire, streaming, tree, args)
                        results.setdefault((tree, wire, streaming), []).append(seconds)
            print(f"  round {round_ + 1} done (load {os.getloadavg()[0]:.1f})", flush=True)
    print(f"\n  {'':44}{'Esc -> shown':>14}{'text after Esc':>16}{'/ baseline':>12}   all (ms)")
    for tree in trees:
        for wire in WIRES:
            base = statistics.median(shown for shown, _ in results[(tree, wire, False)])
            for streaming in (False, True):
                runs = results[(tree, wire, streaming)]
                shown = statistics.median(s for s, _ in runs)
                after = statistics.median(a for _, a in runs)
                label = f"{'this tree' if not tree else Path(tree).name}, {wire}: " + (
                    "streamed answer" if streaming else "shell (baseline)"
                )
                print(
                    f"  {label:44}{shown * 1000:11.0f} ms{after * 1000:13.0f} ms{shown / base:11.2f}x   "
                    + ", ".join(f"{s * 1000:.0f}" for s, _ in runs)
                )
    print(f"\n  load average at the end: {os.getloadavg()[0]:.1f}")


if __name__ == "__main__":
    main()
