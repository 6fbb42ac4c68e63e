"""How much of the parent's context a subagent saves: read 20 files directly vs through `explore`.

Run: python bench/subagent_context.py [--files N] [--lines N]

A real Session runs one turn against an in-process model that reports input tokens as the size
of each request (JSON characters / 4). Directly, the parent reads every file itself and keeps
every output in its history. Through a child, the parent makes one `task` call; the `explore`
child reads the files in its own history and answers with a short summary, which is all the
parent keeps. Printed: the parent's context tokens after each run, their ratio (target < 25%),
and the child's own tokens, which count in the session totals instead.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import sys
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli.commands.conversation import submit  # noqa: E402
from agent_cli.config import load_config  # noqa: E402
from agent_cli.items import Item, ToolCall, ToolOutput, assistant, item_to_dict  # noqa: E402
from agent_cli.models import base as stream  # noqa: E402
from agent_cli.models.base import Prompt, Usage  # noqa: E402
from agent_cli.runtime import open_session  # noqa: E402

SUMMARY = (
    "The {n} modules each define one `compute_*` function that adds its inputs and scales the sum; "
    "they differ only in the factor (module_i uses i). None has tests; module_0.py is the odd one "
    "out with a factor of 0. Paths: src/module_0.py … src/module_{last}.py, each function at line 3."
)


class ScriptedModel:
    """The parent either reads the files itself or delegates; the child reads, then summarizes."""

    provider = "bench"
    api_key = base_url = quirks = None  # the ModelClient protocol's; nothing to connect to
    url = "http://bench.invalid"

    def __init__(self, files: list[str], delegate: bool):
        self.files = files
        self.delegate = delegate

    async def aclose(self) -> None:
        pass

    async def stream(self, prompt: Prompt) -> AsyncIterator[stream.StreamEvent]:
        is_child = prompt.instructions.startswith("You are `explore`")
        answered = any(isinstance(item, ToolOutput) for item in prompt.items)
        for item in self.reply(is_child, answered):
            yield stream.OutputItem(item)
        size = len(prompt.instructions) + len(json.dumps([item_to_dict(i) for i in prompt.items]))
        size += len(json.dumps([(t.name, t.description, t.parameters) for t in prompt.tools]))
        yield stream.Completed(Usage(input_tokens=math.ceil(size / 4), output_tokens=50))

    def reply(self, is_child: bool, answered: bool) -> list[Item]:
        if answered:
            text = SUMMARY.format(n=len(self.files), last=len(self.files) - 1) if is_child else "Summarized."
            return [assistant(text)]
        if self.delegate and not is_child:
            prompt = f"Read every file under src/ ({len(self.files)} files) and summarize what they define."
            arguments = {"agent": "explore", "description": "read the modules", "prompt": prompt}
            return [ToolCall("task-0", "task", json.dumps(arguments))]
        prefix = "child" if is_child else "parent"
        return [ToolCall(f"{prefix}-{i}", "read_file", json.dumps({"path": path})) for i, path in enumerate(self.files)]


def write_files(cwd: Path, count: int, lines: int) -> list[str]:
    paths = []
    for n in range(count):
        path = cwd / "src" / f"module_{n}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        body = [f'"""Module {n}."""', "", f"def compute_{n}(x, y):", f"    return (x + y) * {n}", ""]
        body += [f"# line {i}: notes about compute_{n}, its callers and its history" for i in range(lines - len(body))]
        path.write_text("\n".join(body) + "\n")
        paths.append(f"src/module_{n}.py")
    return paths


async def run(cwd: Path, files: list[str], delegate: bool) -> tuple[int, Usage]:
    config = load_config(cwd, ['model="bench-model"', 'model_provider="openai-chat"', "model_context_window=1000000"])
    client = ScriptedModel(files, delegate)
    session = open_session(config, interactive=False, clients=lambda model: client)
    async for event in submit(session, "What do the modules under src/ define?"):
        if type(event).__name__ in ("Error", "TurnFailed"):
            raise SystemExit(f"the turn failed: {event}")
    context = session.context_tokens()
    session.rollout.close()
    return context, session.total_usage


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--lines", type=int, default=120)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
        os.environ["AGENT_HOME"] = home
        cwd = Path(work)
        files = write_files(cwd, args.files, args.lines)
        direct, direct_total = asyncio.run(run(cwd, files, delegate=False))
        child, child_total = asyncio.run(run(cwd, files, delegate=True))
    ratio = child / direct
    print(f"files read                       {args.files} x {args.lines} lines")
    print(f"parent context, reading directly {direct:>8,} tokens")
    print(f"parent context, through explore  {child:>8,} tokens")
    print(f"ratio                            {ratio:>8.1%}  (target < 25%)")
    print(
        f"session input tokens             {direct_total.input_tokens:>8,} direct, "
        f"{child_total.input_tokens:,} with the child (its tokens count in the totals)"
    )
    if ratio >= 0.25:
        raise SystemExit("over the target")


if __name__ == "__main__":
    main()
