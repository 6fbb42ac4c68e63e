"""How fast the TUI renders a streamed answer, and whether that grows with the transcript behind it.

    .venv/bin/python bench/tui_stream.py [--kb 30] [--chunk 16] [--cells 0,200,1000] [--rounds 5]
                                         [--append] [--unpruned]

1. Streaming: the fake model server streams KB of markdown in CHUNK-character deltas through the
   session's real client over HTTP. The stream's own cost (the session alone consumes it, no UI)
   is the baseline; then the headless app renders the same stream after 0, 200 and 1,000 cells
   in its transcript. The cases are interleaved over --rounds rounds (a slow spell on a shared
   machine hits every case) and medians are printed, with the ratio after-N / after-0 and the
   ratio to the stream alone, for wall time and for CPU time of the thread that runs the app and
   the session (wall time on a loaded machine is mostly waiting for a CPU). A warm-up run first
   pays the imports, so the first case is not charged for them.
   Next to the times, counts of Textual's work during the stream, which do not vary with load
   (tests/tui/render_work.py): screen layouts, widgets placed per layout, heights computed and
   paints of the cells that were there before the answer, and widgets in the answer.
   The fake server sends the whole answer at once unless --delay paces it like a model; paced,
   the wall time past the stream alone is how long after the last delta the answer is all shown,
   and a key is typed into the composer every --type-every seconds during the stream: the typing
   latency is the time until the composer holds the character (median and worst).
2. With --append: a transcript is filled with 20 and with 2,000 messages, then the CPU time to
   append one user message + one markdown answer, lay out and paint is measured (median of
   --rounds). With --unpruned the same is done with pruning off, to show what pruning saves.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import os
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from textual import events  # noqa: E402

from agent_cli import events as ev  # noqa: E402
from agent_cli.commands.conversation import submit  # noqa: E402
from agent_cli.config import load_config  # noqa: E402
from agent_cli.runtime import open_session  # noqa: E402
from agent_cli.tui.app import AgentApp  # noqa: E402
from agent_cli.tui.widgets.assistant_message import AssistantMessage  # noqa: E402
from agent_cli.tui.widgets.transcript import MAX_CELLS  # noqa: E402
from agent_cli.tui.widgets.user_message import UserMessage  # noqa: E402
from tests.fake_server import FakeModelServer, Reply  # noqa: E402
from tests.tui.render_work import RenderWork, widgets_of  # noqa: E402

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
    return load_config(root, ['model_provider="openai-chat"', 'model="bench-model"', "model_context_window=1000000"])


@dataclass
class Run:
    wall: float
    cpu: float  # seconds of CPU of the thread that runs the event loop (app and session)
    layouts: int = 0
    placed_per_layout: float = 0.0
    older_heights: int = 0
    older_paints: int = 0
    older_renders: int = 0
    answer_widgets: int = 0
    typing: list[float] | None = None  # seconds from a key sent to the composer holding it


async def stream_without_ui(config, document: str, server: FakeModelServer, chunk: int, delay: float = 0.0) -> Run:
    server.script(Reply(text=document, chunk_size=chunk, delay=delay))
    session = open_session(config, interactive=True)
    deltas = 0
    gc.collect()
    wall, cpu = time.perf_counter(), time.thread_time()
    async for event in submit(session, "write the document"):
        deltas += isinstance(event, ev.TextDelta)
    run = Run(time.perf_counter() - wall, time.thread_time() - cpu)
    await session.client.aclose()
    assert deltas > 1, "the document did not stream"
    return run


async def stream_with_ui(
    config,
    document: str,
    server: FakeModelServer,
    chunk: int,
    prior_cells: int,
    delay: float = 0.0,
    type_every: float = 0.0,
) -> Run:

    server.script(Reply(text=document, chunk_size=chunk, delay=delay))
    app = AgentApp(config)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await fill(app, prior_cells)
        await pilot.pause()
        older = widgets_of(app.transcript.cells)
        work = RenderWork()
        gc.collect()  # the previous case's app is garbage now: collecting it is not this case's work
        with work.counting():
            wall, cpu = time.perf_counter(), time.thread_time()
            app.send("write the document")
            typing: list[float] = []
            next_key = time.perf_counter() + type_every
            while app.busy:  # the turn ends after the last delta is appended to the widget
                if type_every and time.perf_counter() >= next_key:
                    typing.append(await type_key(app))
                    next_key = time.perf_counter() + type_every
                await asyncio.sleep(0.005)
            await settle(pilot)
            run = Run(time.perf_counter() - wall, time.thread_time() - cpu, typing=typing)
        shown = app.transcript.query(AssistantMessage).last()
        assert shown.text == document, "the rendered answer differs from the streamed one"
        run.layouts = work.layouts
        run.placed_per_layout = work.placed / max(1, work.layouts)
        run.older_heights = work.heights_of(older)
        run.older_paints = work.paints_of(older)
        run.older_renders = work.renders_of(older)
        run.answer_widgets = len(list(shown.walk_children()))
    return run


async def type_key(app) -> float:
    """Seconds from a key sent as the terminal sends it until the focused composer holds it."""
    before = app.composer.text
    started = time.perf_counter()
    app._driver.send_message(events.Key("x", "x"))  # as the pilot does, without its waits
    while app.composer.text == before and time.perf_counter() - started < 10:
        await asyncio.sleep(0.001)
    return time.perf_counter() - started


async def settle(pilot) -> None:
    """Until the screen has handled every pending message, laid out and painted the final state.

    Mounting and layout run on messages and on the refresh timer, after the turn has ended; a
    bench that stops at the end of the turn misses a varying part of that work."""
    for _ in range(2):  # the first layout can post messages of its own (resizes, scrollbars)
        await pilot.pause()


async def shown_at_once(config, document: str) -> Run:
    """The same answer added whole (not streamed): what Textual's Markdown costs for it anyway."""

    app = AgentApp(config)
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        gc.collect()
        wall, cpu = time.perf_counter(), time.thread_time()
        await app.transcript.add(AssistantMessage(document))
        await settle(pilot)
        return Run(time.perf_counter() - wall, time.thread_time() - cpu)


async def fill(app, messages: int) -> None:

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


async def streaming(config, server: FakeModelServer, args) -> None:
    document = markdown_document(args.kb)
    cases = [int(cells) for cells in args.cells.split(",")]
    paced = f", {args.delay * 1000:.0f} ms apart" if args.delay else ""
    print(
        f"streaming {len(document) / 1024:.0f} KB of markdown in {args.chunk}-character deltas{paced}; "
        f"cases interleaved over {args.rounds} rounds, medians"
    )
    await stream_without_ui(config, "warm up the HTTP library import", server, args.chunk)
    await stream_with_ui(config, markdown_document(4), server, args.chunk, 2)  # imports, parsers, CSS
    alone: list[Run] = []
    at_once: list[Run] = []
    runs: dict[int, list[Run]] = {cells: [] for cells in cases}
    for round_ in range(args.rounds):
        alone.append(await stream_without_ui(config, document, server, args.chunk, args.delay))
        at_once.append(await shown_at_once(config, document))
        shift = round_ % len(cases)
        for cells in cases[shift:] + cases[:shift]:  # each case goes first in some round
            runs[cells].append(
                await stream_with_ui(config, document, server, args.chunk, cells, args.delay, args.type_every)
            )
        print(
            f"  round {round_ + 1}: alone {alone[-1].wall:.2f} s; at once {at_once[-1].wall:.2f} s; "
            + "; ".join(f"{cells} cells {runs[cells][-1].wall:.2f} s" for cells in cases),
            flush=True,
        )

    base_wall, base_cpu = median(alone, "wall"), median(alone, "cpu")
    print(
        f"\n  {'':24}{'wall s':>8}{'CPU s':>8}{'/alone wall':>13}{'/alone CPU':>12}"
        f"{'/0 cells wall':>15}{'/0 cells CPU':>14}"
    )
    print(f"  {'stream alone (no UI)':24}{base_wall:8.2f}{base_cpu:8.2f}")
    wall, cpu = median(at_once, "wall"), median(at_once, "cpu")
    print(
        f"  {'answer shown at once':24}{wall:8.2f}{cpu:8.2f}{wall / base_wall:12.1f}x{cpu / base_cpu:11.1f}x"
        "   (not streamed: Textual's Markdown widgets alone)"
    )
    first = cases[0]
    for cells in cases:
        wall, cpu = median(runs[cells], "wall"), median(runs[cells], "cpu")
        print(
            f"  {f'rendered after {cells} cells':24}{wall:8.2f}{cpu:8.2f}{wall / base_wall:12.1f}x{cpu / base_cpu:11.1f}x"
            f"{wall / median(runs[first], 'wall'):14.2f}x{cpu / median(runs[first], 'cpu'):13.2f}x"
        )
    print("\n  Textual's work during the stream (medians):")
    print(
        f"  {'':24}{'layouts':>8}{'widgets/layout':>16}{'older cells: heights':>22}{'renders':>9}{'paints':>8}{'answer widgets':>16}"
    )
    for cells in cases:
        print(
            f"  {f'after {cells} cells':24}{median(runs[cells], 'layouts'):8.0f}{median(runs[cells], 'placed_per_layout'):16.0f}"
            f"{median(runs[cells], 'older_heights'):22.0f}{median(runs[cells], 'older_renders'):9.0f}{median(runs[cells], 'older_paints'):8.0f}"
            f"{median(runs[cells], 'answer_widgets'):16.0f}"
        )
    if args.delay and args.type_every:
        print(f"\n  typing during the stream (a key every {args.type_every} s; all rounds):")
        for cells in cases:
            keys = [latency for run in runs[cells] for latency in run.typing or []]
            if keys:
                keys.sort()
                print(
                    f"  {f'after {cells} cells':24}{len(keys):5d} keys: median {statistics.median(keys) * 1000:5.0f} ms, "
                    f"90th {keys[int(len(keys) * 0.9)] * 1000:5.0f} ms, worst {keys[-1] * 1000:5.0f} ms"
                )


async def appending(config, args) -> None:

    print(
        "\nappending one user message + one answer (CPU time per append, layout and paint included; "
        f"median of {args.rounds} rounds)"
    )
    short: list[float] = []
    long: list[float] = []
    for _ in range(args.rounds):  # alternate, so a slow spell hits both cases
        short.append(await append_time(config, 20, None))
        long.append(await append_time(config, 2000, None))
    print(f"  20 messages:                         {statistics.median(short) * 1000:6.1f} ms   rounds: {fmt(short)}")
    print(
        f"  2,000 messages (view keeps {MAX_CELLS}):     {statistics.median(long) * 1000:6.1f} ms   rounds: {fmt(long)}"
        f"  ({statistics.median(long) / statistics.median(short):.2f}x)"
    )
    if args.unpruned:
        unpruned = await append_time(config, 2000, 10**9)
        print(
            f"  2,000 messages, pruning off:         {unpruned * 1000:6.1f} ms  ({unpruned / statistics.median(short):.2f}x)"
        )


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kb", type=int, default=30)
    parser.add_argument("--chunk", type=int, default=16, help="characters per streamed delta")
    parser.add_argument(
        "--delay",
        type=float,
        default=0.0,
        help="seconds between deltas (0.01: 1,600 characters a second, a fast model's pace)",
    )
    parser.add_argument(
        "--cells", default="0,200,1000", help="cells in the transcript before the answer, one case each"
    )
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument(
        "--type-every", type=float, default=0.5, help="with --delay: seconds between keys typed during the stream"
    )
    parser.add_argument("--append", action="store_true", help="also measure appends to short and long transcripts")
    parser.add_argument(
        "--unpruned", action="store_true", help="with --append: also a 2,000-message transcript without pruning"
    )
    args = parser.parse_args()

    home = Path(tempfile.mkdtemp(prefix="agent-bench-"))
    os.environ["AGENT_HOME"] = str(home / "agent-home")
    root = home / "repo"
    root.mkdir()
    with FakeModelServer() as server:
        config = make_config(root, server)
        await streaming(config, server, args)
        if args.append:
            await appending(config, args)


def median(runs: list[Run], field: str) -> float:
    return statistics.median(getattr(run, field) for run in runs)


def fmt(values: list[float]) -> str:
    return ", ".join(f"{value * 1000:.0f}" for value in values)


if __name__ == "__main__":
    asyncio.run(main())
