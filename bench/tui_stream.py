"""How fast the TUI renders: a 100 KB streamed answer, and appends to short vs long transcripts.

    .venv/bin/python bench/tui_stream.py [--kb 100] [--chunk 16] [--unpruned]

1. Streaming: the fake model server streams KB of markdown in CHUNK-character deltas through the
   session's real client over HTTP. First the session alone consumes the stream (the stream's own duration), then
   the headless app renders it; both times are printed with their ratio.
2. Appending: a transcript is filled with 20 and with 2,000 messages, then the CPU time to append
   one user message + one markdown answer, lay out and paint is measured (best of --rounds).
   With --unpruned the same is done with pruning off, to show what pruning saves.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from agent_cli.commands.dispatch import submit  # noqa: E402
from tests.fake_server import FakeModelServer, Reply

SIZE = (120, 40)


def markdown_document(kilobytes: int) -> str:
    """Realistic assistant markdown: headings, prose, lists, code and tables, ``kilobytes`` long."""
    section = (
        "## Section {n}\n\n"
        "The parser reads the **input** line by line and keeps a `state` so that nested blocks "
        "close in the right order. See [the docs](https://example.com) for details.\n\n"
        "- first point about item {n}\n- second point, with `code`\n  - a nested point\n\n"
        "```python\ndef handle_{n}(value: int) -> int:\n    if value < 0:\n        raise ValueError(value)\n"
        "    return value * {n}\n```\n\n"
        "| name | value |\n|------|-------|\n| a{n} | {n} |\n| b{n} | {m} |\n\n"
    )
    parts: list[str] = []
    size = 0
    n = 0
    while size < kilobytes * 1024:
        n += 1
        part = section.format(n=n, m=n * 2)
        parts.append(part)
        size += len(part)
    return "".join(parts)[: kilobytes * 1024]


def make_config(root: Path, server: FakeModelServer):
    os.environ["OPENAI_BASE_URL"] = server.openai_base_url
    os.environ["OPENAI_API_KEY"] = "bench"
    from agent_cli.config import load_config

    return load_config(root, ['model_provider="openai-chat"', 'model="bench-model"', "model_context_window=1000000"])


async def stream_without_ui(config, document: str, server: FakeModelServer, chunk: int) -> tuple[float, int]:
    from agent_cli import events as ev
    from agent_cli.runtime import open_session

    server.script(Reply(text=document, chunk_size=chunk))
    session = open_session(config, interactive=True)
    deltas = 0
    started = time.perf_counter()
    async for event in submit(session, "write the document"):
        deltas += isinstance(event, ev.TextDelta)
    elapsed = time.perf_counter() - started
    await session.client.aclose()
    return elapsed, deltas


async def stream_with_ui(config, document: str, server: FakeModelServer, chunk: int, prior_cells: int) -> float:
    from agent_cli.tui.app import AgentApp
    from agent_cli.tui.widgets.assistant_message import AssistantMessage

    server.script(Reply(text=document, chunk_size=chunk))
    app = AgentApp(config)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await fill(app, prior_cells)
        await pilot.pause()
        started = time.perf_counter()
        app.send("write the document")
        while app.busy:  # the turn ends after the last delta is appended to the widget
            await asyncio.sleep(0.005)
        app.screen._on_timer_update()  # lay out and paint the final state
        elapsed = time.perf_counter() - started
        shown = app.transcript.query(AssistantMessage).last()
        assert shown.text == document, "the rendered answer differs from the streamed one"
    return elapsed


async def fill(app, messages: int) -> None:
    from agent_cli.tui.widgets.assistant_message import AssistantMessage
    from agent_cli.tui.widgets.user_message import UserMessage

    for index in range(messages):
        if index % 2 == 0:
            await app.transcript.add(UserMessage(f"question {index}: what does module {index} do?"))
        else:
            await app.transcript.add(AssistantMessage(f"Module **{index}** parses input.\n\n- reads\n- writes `x`\n"))


async def append_time(config, messages: int, max_cells: int | None, samples: int = 40) -> float:
    """CPU seconds per append of a user message and an answer, layout and paint included.

    CPU time of the UI thread is summed over all appends and the pauses between them (a pause
    costs nothing), so work Textual defers to its refresh timer is counted and other processes'
    load is not.
    """
    from agent_cli.tui.app import AgentApp
    from agent_cli.tui.widgets.assistant_message import AssistantMessage
    from agent_cli.tui.widgets.user_message import UserMessage

    app = AgentApp(config)
    if max_cells is not None:
        app.transcript.max_cells = max_cells
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await fill(app, messages)
        await pilot.pause()
        app.activity.stop()
        started = time.thread_time()
        for index in range(samples):
            await app.transcript.add(UserMessage(f"follow-up {index}"))
            await app.transcript.add(AssistantMessage(f"Answer **{index}**:\n\n- one\n- two\n"))
            await asyncio.sleep(0.05)  # the refresh timer lays out and paints meanwhile
        return (time.thread_time() - started) / samples


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=100)
    parser.add_argument("--chunk", type=int, default=16, help="characters per streamed delta")
    parser.add_argument("--unpruned", action="store_true", help="also measure a 2,000-message transcript without pruning")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of the append measurement")
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="agent-bench-"))
    os.environ["AGENT_HOME"] = str(home / "agent-home")
    root = home / "repo"
    root.mkdir()
    document = markdown_document(args.kb)
    with FakeModelServer() as server:
        config = make_config(root, server)
        print(f"streaming {len(document) / 1024:.0f} KB of markdown in {args.chunk}-character deltas")
        await stream_without_ui(config, "warm up the HTTP library import", server, args.chunk)
        baseline, deltas = await stream_without_ui(config, document, server, args.chunk)
        print(f"  stream alone (session, no UI):      {baseline:6.2f} s  ({deltas} deltas)")
        for prior in (0, 200):
            rendered = await stream_with_ui(config, document, server, args.chunk, prior)
            print(f"  streamed and rendered ({prior:3d} cells before): {rendered:6.2f} s  ({rendered / baseline:.2f}x the stream)")

        print("appending one user message + one answer (CPU time per append, layout and paint included;")
        print(f"  best of {args.rounds} rounds, because a shared machine's CPU time varies by tens of percent)")
        from agent_cli.tui.widgets.transcript import MAX_CELLS

        short: list[float] = []
        long: list[float] = []
        for _ in range(args.rounds):  # alternate, so a slow spell hits both cases
            short.append(await append_time(config, 20, None))
            long.append(await append_time(config, 2000, None))
        print(f"  20 messages:                         {min(short) * 1000:6.1f} ms   rounds: {fmt(short)}")
        print(f"  2,000 messages (view keeps {MAX_CELLS}):     {min(long) * 1000:6.1f} ms   rounds: {fmt(long)}"
              f"  ({min(long) / min(short):.2f}x)")
        if args.unpruned:
            unpruned = await append_time(config, 2000, 10**9)
            print(f"  2,000 messages, pruning off:         {unpruned * 1000:6.1f} ms  ({unpruned / min(short):.2f}x)")


def fmt(values: list[float]) -> str:
    return ", ".join(f"{value * 1000:.0f}" for value in values)


if __name__ == "__main__":
    asyncio.run(main())
