"""The shell tool with real processes: exit codes, ordering, timeouts, huge and odd output."""

from __future__ import annotations

import asyncio
import os
import re
import time
from pathlib import Path

import pytest

from agent_cli.events import ToolOutputDelta
from agent_cli.items import ToolCall
from agent_cli.tools.base import ToolContext
from agent_cli.tools.capture import OutputCapture
from agent_cli.tools.registry import ToolRegistry
from agent_cli.tools.shell import ShellTool
from tests.processes import alive, gone


@pytest.fixture
def events() -> list:
    return []


@pytest.fixture
def ctx(tmp_path: Path, events: list) -> ToolContext:
    return ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", emit=events.append, call_id="call_1")


async def run(ctx: ToolContext, command: str, **extra):
    return await ShellTool().run({"command": command, **extra}, ctx)


async def wait_for_file(path: Path, within: float = 5.0) -> str:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text().strip()
        await asyncio.sleep(0.02)
    raise AssertionError(f"{path} never appeared")


async def test_success_and_exit_codes(ctx):
    ok = await run(ctx, "echo hello")
    assert ok.exit_code == 0 and ok.success
    assert re.fullmatch(r"Exit code: 0\nWall time: \d+\.\d seconds\nOutput:\nhello\n", ok.output)
    failed = await run(ctx, "echo oops; exit 3")
    assert failed.exit_code == 3 and not failed.success
    assert failed.output.startswith("Exit code: 3\n")
    killed = await run(ctx, "kill -9 $$")
    assert killed.exit_code == 128 + 9


async def test_stdout_and_stderr_are_merged_in_order(ctx):
    result = await run(ctx, "echo out1; echo err1 >&2; echo out2; echo err2 >&2")
    assert result.output.endswith("Output:\nout1\nerr1\nout2\nerr2\n")


async def test_stdin_is_closed(ctx):
    started = time.monotonic()
    result = await run(ctx, "cat; echo done", timeout_ms=10_000)
    assert result.output.endswith("done\n")
    assert time.monotonic() - started < 5


async def test_workdir_and_env(tmp_path, events):
    (tmp_path / "sub").mkdir()
    ctx = ToolContext(
        cwd=tmp_path, data_dir=tmp_path / "data", emit=events.append, env={"PATH": os.environ["PATH"], "MARK": "m42"}
    )
    result = await run(ctx, 'pwd; echo "$MARK"', workdir="sub")
    assert result.output.endswith(f"{(tmp_path / 'sub').resolve()}\nm42\n")


async def test_timeout_kills_children_and_grandchildren(ctx, tmp_path):
    script = "sh -c 'sleep 30 & echo $! > grandchild.pid; wait' & echo $! > child.pid; wait"
    started = time.monotonic()
    result = await run(ctx, script, timeout_ms=700)
    assert time.monotonic() - started < 5
    assert result.exit_code == 124 and not result.success
    assert "command timed out after 700 ms" in result.output
    for name in ("child.pid", "grandchild.pid"):
        pid = int((tmp_path / name).read_text())
        assert await gone(pid), f"{name} {pid} still running"


async def test_cancellation_kills_the_group(ctx, tmp_path):
    task = asyncio.create_task(run(ctx, "sleep 30 & echo $! > grandchild.pid; wait"))
    pid = int(await wait_for_file(tmp_path / "grandchild.pid"))
    assert alive(pid)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await gone(pid)


async def test_huge_output_is_truncated_and_spilled_in_full(ctx):
    result = await run(ctx, "seq 1 300000")
    out = result.output
    assert "Total output lines: 300000\n" in out
    spill = Path(re.search(r"saved to (\S+);", out).group(1))
    assert spill.parent == ctx.data_dir / "tool-outputs"
    assert spill.read_bytes() == b"".join(b"%d\n" % i for i in range(1, 300001))
    body = out.split("Output:\n", 1)[1]
    assert body.startswith("1\n2\n3\n") and body.endswith("299999\n300000\n")
    assert re.search(r"…\d+ tokens truncated…", body)
    assert len(body.encode()) <= ctx.output_token_limit * 4


async def test_output_over_budget_but_small_is_spilled_too(tmp_path, events):
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", emit=events.append, output_token_limit=20)
    result = await run(ctx, "seq 1 1000")
    spill = Path(re.search(r"saved to (\S+);", result.output).group(1))
    assert spill.read_text() == "".join(f"{i}\n" for i in range(1, 1001))
    assert "Total output lines: 1000" in result.output


async def test_small_output_leaves_no_spill_file(ctx):
    await run(ctx, "seq 1 10")
    assert not (ctx.data_dir / "tool-outputs").exists()


async def test_non_utf8_output_is_replaced(ctx):
    result = await run(ctx, r"printf 'a\377\376b\n'")
    assert result.output.endswith("Output:\na\ufffd\ufffdb\n")


async def test_live_output_deltas(ctx, events):
    await run(ctx, "echo one; sleep 0.3; echo two")
    deltas = [e for e in events if isinstance(e, ToolOutputDelta)]
    assert deltas and all(d.call_id == "call_1" for d in deltas)
    assert "".join(d.text for d in deltas) == "one\ntwo\n"


async def test_bad_arguments_become_errors(ctx):
    registry = ToolRegistry([ShellTool()])
    missing = await registry.dispatch(ToolCall("c", "shell", '{"command": "true", "workdir": "nope"}'), ctx)
    assert not missing.success and "nope" in missing.output
    bad_timeout = await registry.dispatch(ToolCall("c", "shell", '{"command": "true", "timeout_ms": 0}'), ctx)
    assert not bad_timeout.success and "timeout_ms" in bad_timeout.output


def test_capture_memory_is_bounded_and_spill_is_complete(tmp_path):
    spill = tmp_path / "out" / "spill.log"
    capture = OutputCapture(spill, head_cap=1000, tail_cap=1000)
    chunks = [(f"line {i} é\n" * 50).encode() for i in range(400)]
    for chunk in chunks:
        capture.feed(chunk)
        assert len(capture._head) <= 1000 and len(capture._tail) <= 1000
    captured = capture.finish()
    whole = b"".join(chunks)
    assert captured.total_bytes == len(whole)
    assert captured.total_lines == 20_000
    assert captured.total_chars == len(whole.decode())
    assert captured.head == whole[:1000] and captured.tail == whole[-1000:]
    assert not captured.complete
    assert captured.spill_path == spill and spill.read_bytes() == whole


def test_capture_without_trailing_newline_counts_last_line(tmp_path):
    capture = OutputCapture(tmp_path / "s.log")
    capture.feed(b"a\nb")
    captured = capture.finish()
    assert (captured.total_lines, captured.complete, captured.spill_path) == (2, True, None)


async def test_spill_files_are_private_and_old_ones_are_pruned(tmp_path):
    from agent_cli.tools.capture import SPILL_DIR_NAME, prune_old_spills

    old = tmp_path / "data" / SPILL_DIR_NAME / "old.log"
    old.parent.mkdir(parents=True)
    old.write_text("stale")
    os.utime(old, (time.time() - 8 * 86_400,) * 2)
    prune_old_spills.cache_clear()
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", output_token_limit=100)
    result = await ShellTool().run({"command": "seq 1 20000"}, ctx)
    spills = list(old.parent.iterdir())
    assert not old.exists() and len(spills) == 1
    assert spills[0].stat().st_mode & 0o777 == 0o600
    assert str(spills[0]) in result.output
