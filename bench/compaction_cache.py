"""Uncached input tokens of a job that must compact: six ~3k-token reads in a 16k window.

Run: python bench/compaction_cache.py [--window N] [--steps N] [--file-tokens N] [--provider P]

A real Session runs the job against the fake model server over HTTP; the server emulates the
window (a request over it is refused, as real APIs do). Prompt caching is emulated from the
requests: what a request shares as a prefix with an earlier answered one is cached, the rest is
uncached input (tests/window_job.py). Printed: requests sent, the largest one against the window,
refusals, and uncached input beside the previous release's figure, current main's before this
change, and Codex CLI's on the same job (the figures issue 26 measured). This script itself, run
on main just before that change: 28,362 uncached with whole outputs, the summarizing request
refused at 16,182 tokens and its trimmed retry missing the cache.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_cli import events as ev  # noqa: E402
from agent_cli.commands.conversation import submit  # noqa: E402
from agent_cli.config import load_config  # noqa: E402
from agent_cli.runtime import open_session  # noqa: E402
from tests.conftest import provider_env  # noqa: E402
from tests.fake_server import FakeModelServer  # noqa: E402
from tests.window_job import TASK, Job, cache_report, is_summary_request, write_data_files  # noqa: E402

REFERENCE = {"previous release": 18_700, "main before issue 26": 32_000, "Codex CLI": 60_900}
TARGET_SHARE_OF_CODEX = 0.3
MODELS = {"openai-chat": "test-model", "anthropic": "claude-test", "openai": "test-model"}


async def run_job(root: Path, window: int, steps: int, file_tokens: int, provider: str, *overrides: str):
    files = write_data_files(root, steps, file_tokens)
    job = Job(files)
    with FakeModelServer(context_window=window, fallback=job) as server:
        os.environ.update(provider_env(server, provider))
        config = load_config(
            root,
            [
                f'model_provider="{provider}"',
                f'model="{MODELS[provider]}"',
                f"model_context_window={window}",
                "retry_max_attempts=1",
                *overrides,
            ],
        )
        session = open_session(config, interactive=False)
        events = [event async for event in submit(session, TASK)]
        await session.aclose()
        return list(server.requests), events


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--window", type=int, default=16_000)
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--file-tokens", type=int, default=3_100)
    parser.add_argument("--provider", choices=sorted(MODELS), default="openai-chat")
    args = parser.parse_args()
    print(
        f"job: {args.steps} reads of ~{args.file_tokens:,} tokens in a {args.window:,}-token window ({args.provider})"
    )
    for title, overrides in VARIANTS.items():
        print(f"\n{title}")
        report_run(args, *overrides)


# The default caps one tool output at 1/8 of a small window; the second run keeps outputs whole.
VARIANTS = {
    "defaults (tool outputs capped at 1/8 of the window)": (),
    "tool_output_token_limit=10000 set (outputs whole)": ("tool_output_token_limit=10000",),
}


def report_run(args, *overrides: str) -> None:
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as work:
        os.environ["AGENT_HOME"] = home
        root = Path(work)
        (root / ".git").mkdir()
        requests, events = asyncio.run(
            run_job(root, args.window, args.steps, args.file_tokens, args.provider, *overrides)
        )
    report = cache_report(requests)
    done = [event for event in events if isinstance(event, ev.TurnComplete)]
    compactions = [event for event in events if isinstance(event, ev.CompactionFinished)]
    summaries = sum(1 for rec in requests if is_summary_request(rec))
    print(
        f"finished: {'yes' if done else 'NO'}; requests: {len(requests)} ({summaries} summarizing); "
        f"compactions: {len(compactions)} ({', '.join(c.trigger for c in compactions) or 'none'})"
    )
    print(
        f"largest request: {max(rec.input_tokens for rec in requests):,} tokens; refused as too long: {report['refused']}"
    )
    print(f"input tokens: {report['input']:,}; cached (shared prefix): {report['cached']:,}")
    print(f"uncached input tokens: {report['uncached']:>8,}")
    for name, figure in REFERENCE.items():
        print(f"  {name + ':':<24}{figure:>8,}  (this run: {report['uncached'] / figure:.2f}x)")
    target = int(REFERENCE["Codex CLI"] * TARGET_SHARE_OF_CODEX)
    print(
        f"  target (<= {TARGET_SHARE_OF_CODEX}x Codex):   {target:>8,}  {'met' if report['uncached'] <= target else 'MISSED'}"
    )


if __name__ == "__main__":
    main()
