"""``shell`` with ``run_in_background``, and the ``shell_output`` and ``shell_kill`` tools.

Claude Code's ``BashOutput`` and ``KillShell`` are these two (tools/claude_names.py).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from agent_cli.models.base import ToolSpec
from agent_cli.tools.background import BackgroundProcess, BackgroundProcesses
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.capture import OutputCapture, new_spill_path
from agent_cli.tools.captured_text import format_captured
from agent_cli.tools.common import output_policy, str_arg

FIRST_OUTPUT_WAIT_S = 1.0  # the start returns what the command printed within this
READ_CHUNK = 256 * 1024
MAX_LINE = 1024 * 1024  # a filter looks at lines in pieces of at most this size

ID_PARAMETER = {"type": "string", "description": "Background process id, e.g. bg1."}

OUTPUT_SPEC = ToolSpec(
    name="shell_output",
    description="New output of a background process since the last read, and its state. `filter`: keep matching lines.",
    parameters={
        "type": "object",
        "properties": {"id": ID_PARAMETER, "filter": {"type": "string", "description": "Regex."}},
        "required": ["id"],
        "additionalProperties": False,
    },
)

KILL_SPEC = ToolSpec(
    name="shell_kill",
    description="Stop a background process and its children.",
    parameters={
        "type": "object",
        "properties": {"id": ID_PARAMETER},
        "required": ["id"],
        "additionalProperties": False,
    },
)


def registry_of(ctx: ToolContext) -> BackgroundProcesses:
    if ctx.background is None:
        raise ToolError("background processes are not available in this session")
    return ctx.background


def process_of(ctx: ToolContext, args: dict[str, Any]) -> BackgroundProcess:
    registry = registry_of(ctx)
    process_id = str_arg(args, "id")
    proc = registry.get(process_id)
    if proc is None:
        known = ", ".join(p.id for p in registry.list()) or "none"
        raise ToolError(f"no background process {process_id!r}; known: {known}")
    return proc


def state_line(proc: BackgroundProcess) -> str:
    proc.exit_seen = proc.exit_seen or not proc.running
    return f"Process {proc.id} (pid {proc.pid}): {proc.status()} after {proc.runtime():.1f} s"


async def start_in_background(
    ctx: ToolContext,
    argv: Sequence[str],
    command: str,
    workdir: Path,
    env: dict[str, str] | None,
    keep_alive: bool = False,
    audit: Callable[[], list[str]] | None = None,
) -> ToolResult:
    registry = registry_of(ctx)
    proc = await registry.start(argv, command=command, cwd=workdir, env=env, keep_alive=keep_alive, audit=audit)
    await registry.wait_for_output(proc, FIRST_OUTPUT_WAIT_S)
    lines = [
        f"Started in the background as {proc.id} (pid {proc.pid})"
        + (", kept running after the session ends" if keep_alive else "")
        + ".",
        f'Read new output with shell_output {{"id": "{proc.id}"}}; stop it with shell_kill.',
    ]
    text = read_new_output(ctx, proc, None, [*lines, state_line(proc)])
    return ToolResult(text, success=proc.running or proc.exit_code == 0, exit_code=proc.exit_code)


def read_new_output(
    ctx: ToolContext, proc: BackgroundProcess, pattern: re.Pattern[str] | None, header: list[str]
) -> str:
    """What ``proc`` printed since the last read (through ``pattern`` when given), within the
    output budget; a long stretch goes to a spill file like any output."""
    capture = OutputCapture(new_spill_path(ctx.data_dir, ctx.call_id), count_chars=output_policy(ctx).kind == "bytes")
    end = proc.bytes_written if not proc.keep_alive else proc.total_bytes
    chunks = _chunks(proc.log_path, proc.read_offset, end)
    if pattern is None:
        for chunk in chunks:
            capture.feed(chunk)
        proc.read_offset = end
    else:
        proc.read_offset = _filter_lines(chunks, pattern, capture, proc.read_offset, whole=not proc.running)
    captured = capture.finish()
    header = list(header)
    if proc.bytes_dropped:
        header.append(f"{proc.bytes_dropped} bytes printed beyond the log's size cap were not kept")
    if captured.total_bytes == 0:
        return "\n".join([*header, "No new output" + (" matched the filter." if pattern is not None else ".")])
    return format_captured(ctx, captured, header)


def _chunks(path: Path, start: int, end: int) -> Iterator[bytes]:
    if end <= start:
        return
    with open(path, "rb") as handle:
        handle.seek(start)
        left = end - start
        while left > 0 and (chunk := handle.read(min(READ_CHUNK, left))):
            left -= len(chunk)
            yield chunk


def _filter_lines(
    chunks: Iterator[bytes], pattern: re.Pattern[str], capture: OutputCapture, offset: int, whole: bool
) -> int:
    """Feed the matching lines to ``capture``; returns the new read offset. A last line without a
    newline waits for the next read while the process runs (it may not be finished)."""
    pending = b""
    for chunk in chunks:
        pending += chunk
        *lines, pending = pending.split(b"\n")
        for line in lines:
            offset += len(line) + 1
            if pattern.search(line[:MAX_LINE].decode("utf-8", "replace")):
                capture.feed(line + b"\n")
        if len(pending) > MAX_LINE:  # a huge unterminated line is judged by its start
            offset += len(pending)
            if pattern.search(pending[:MAX_LINE].decode("utf-8", "replace")):
                capture.feed(pending + b"\n")
            pending = b""
    if whole and pending:
        offset += len(pending)
        if pattern.search(pending.decode("utf-8", "replace")):
            capture.feed(pending)
    return offset


class ShellOutputTool(Tool):
    spec = OUTPUT_SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        proc = process_of(ctx, args)
        pattern = None
        if args.get("filter"):
            try:
                pattern = re.compile(str(args["filter"]))
            except re.error as exc:
                raise ToolError(f"filter is not a valid regex: {exc}") from None
        text = read_new_output(ctx, proc, pattern, [state_line(proc)])
        return ToolResult(text, exit_code=proc.exit_code)


class ShellKillTool(Tool):
    spec = KILL_SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        proc = process_of(ctx, args)
        if not proc.running:
            return ToolResult(f"{state_line(proc)}; nothing to stop.", exit_code=proc.exit_code)
        await registry_of(ctx).kill(proc)
        return ToolResult(f"Stopped {proc.id} (pid {proc.pid}). {state_line(proc)}.", exit_code=proc.exit_code)
