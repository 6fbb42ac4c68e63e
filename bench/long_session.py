"""Per-turn harness overhead with a short and with a very long history.

Run: python bench/long_session.py [--turns N] [--tokenizer estimate|tiktoken]

A real Session runs whole turns against an in-process model that answers at once, so what is
measured is everything the harness does per turn (recording, token accounting, the
auto-compaction check, building the request, events, a tool call) and not the wait for the model.
Time spent inside the model client's ``stream`` is subtracted. Histories of 100 and of 10,000
items are compared; the target is a ratio of at most 2. Session files are written to tmpfs
when available (fsync jitter is constant per turn and only adds noise). Peak memory is the tracemalloc peak of
the long run (history included) and the process's max RSS.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.commands.conversation import submit  # noqa: E402
from agent_cli.config import load_config  # noqa: E402
from agent_cli.items import Item, ToolCall, ToolOutput, assistant, user  # noqa: E402
from agent_cli.models import base as stream  # noqa: E402
from agent_cli.models.base import Prompt, Usage  # noqa: E402
from agent_cli.runtime import open_session  # noqa: E402
from agent_cli.session.session import Session  # noqa: E402


class InstantModel:
    """Answers every other request with one read_file call, the others with text. Times itself."""

    provider = "bench"
    api_key = base_url = quirks = None  # the ModelClient protocol's; nothing to connect to
    url = "http://bench.invalid"

    def __init__(self, model: str):
        self.model = model
        self.requests = 0
        self.inside = 0.0  # seconds spent in stream(): "waiting for the model", subtracted

    async def aclose(self) -> None:
        pass

    async def stream(self, prompt: Prompt) -> AsyncIterator[stream.StreamEvent]:
        started = time.perf_counter()
        self.requests += 1
        input_tokens = 50 * len(prompt.items)  # a plausible report, never near the window
        if self.requests % 2:
            item: Item = ToolCall(f"bench_{self.requests}", "read_file", '{"path": "notes.txt"}')
        else:
            item = assistant("Done: the notes say what they say.")
        self.inside += time.perf_counter() - started
        yield stream.OutputItem(item)
        started = time.perf_counter()
        usage = Usage(input_tokens=input_tokens, cached_input_tokens=input_tokens - 100, output_tokens=20)
        self.inside += time.perf_counter() - started
        yield stream.Completed(usage)


def synthetic_history(count: int) -> list[Item]:
    """A plausible conversation: user asks, model calls a tool, reads output, answers."""
    items: list[Item] = []
    n = 0
    while len(items) < count:
        items += [
            user(f"Please look at module_{n}.py and fix the off-by-one in the loop bounds."),
            ToolCall(f"old_{n}", "read_file", f'{{"path": "src/module_{n}.py"}}'),
            ToolOutput(f"old_{n}", "".join(f"{i}\tline {i} of module {n}: value = compute(x, y)\n" for i in range(8))),
            assistant(f"Fixed module_{n}.py: the loop now stops at len(items) - 1."),
        ]
        n += 1
    return items[:count]


def make_session(cwd: Path, model: str, history_items: int) -> tuple[Session, InstantModel]:
    config = load_config(cwd, [f'model="{model}"', 'model_provider="openai-chat"', "model_context_window=100000000"])
    client = InstantModel(model)
    session = open_session(config, interactive=False, clients=lambda model: client)
    session.tokens.load()  # --tokenizer tiktoken counts exactly from the start (exec would near a limit)
    session.start_context(lambda event: None)
    session.history.extend(synthetic_history(history_items))
    session.meter.record_usage(Usage(input_tokens=50 * len(session.history), output_tokens=20))
    return session, client


async def per_turn_overhead(session: Session, client: InstantModel, turns: int) -> list[float]:
    samples = []
    for turn in range(turns):
        client.inside = 0.0
        started = time.perf_counter()
        async for _ in submit(session, f"turn {turn}: read notes.txt and tell me what it says"):
            pass
        samples.append(time.perf_counter() - started - client.inside)
    return samples


def measure(cwd: Path, model: str, history_items: int, turns: int) -> tuple[float, int]:
    session, client = make_session(cwd, model, history_items)
    asyncio.run(per_turn_overhead(session, client, 5))  # warm up: imports, tokenizer, caches
    samples = asyncio.run(per_turn_overhead(session, client, turns))
    return statistics.median(samples), len(session.history)


def peak_memory(cwd: Path, model: str, history_items: int) -> int:
    tracemalloc.start()
    session, client = make_session(cwd, model, history_items)
    asyncio.run(per_turn_overhead(session, client, 5))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    return peak


def serialization_time(cwd: Path, model: str, history_items: int) -> float:
    """The Chat Completions client's conversion of one request to JSON: O(n) by nature."""
    from agent_cli.models.openai_chat import chat_messages

    session, _ = make_session(cwd, model, history_items)
    items = session.history.for_request()
    started = time.perf_counter()
    for _ in range(10):
        json.dumps(chat_messages(session.instructions, items))
    return (time.perf_counter() - started) / 10


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--turns", type=int, default=50)
    parser.add_argument("--tokenizer", choices=("estimate", "tiktoken"), default="estimate")
    args = parser.parse_args()
    model = "gpt-4o" if args.tokenizer == "tiktoken" else "bench-model"
    # Session files go to tmpfs when there is one: fsync at the end of a turn costs the same at
    # any history length, but on a busy disk its jitter drowns what this benchmark compares.
    ram = "/dev/shm" if os.path.isdir("/dev/shm") else None
    with tempfile.TemporaryDirectory(dir=ram) as home, tempfile.TemporaryDirectory() as work:
        os.environ["AGENT_HOME"] = home
        cwd = Path(work)
        (cwd / "notes.txt").write_text("remember to run the tests\n")
        short, _ = measure(cwd, model, 100, args.turns)
        long, final_items = measure(cwd, model, 10_000, args.turns)
        peak = peak_memory(cwd, model, 10_000)
        wire_short, wire_long = serialization_time(cwd, model, 100), serialization_time(cwd, model, 10_000)
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"tokenizer:                               {args.tokenizer}; session files on {ram or 'disk'}")
    print(f"per-turn harness overhead, 100 items:    {short * 1000:8.3f} ms (median of {args.turns} turns)")
    print(
        f"per-turn harness overhead, 10,000 items: {long * 1000:8.3f} ms (median of {args.turns} turns; "
        f"{final_items:,} items at the end)"
    )
    print(f"ratio:                                   {long / short:8.2f}x (target <= 2)")
    print(
        f"not counted above: the client's request JSON, {wire_short * 1000:.2f} ms at 100 items, "
        f"{wire_long * 1000:.2f} ms at 10,000 (inherent: every item is sent)"
    )
    print(f"peak traced memory, 10,000 items:        {peak / 1e6:8.1f} MB")
    print(f"max RSS of this process:                 {rss_mb:8.1f} MB")


if __name__ == "__main__":
    main()
