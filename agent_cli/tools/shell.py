"""The ``shell`` tool: run a command with bash and report exit code, time and output.

bash loads the session's snapshot of the login shell (tools/shell_snapshot.py) instead of
running the profile for every command; when the snapshot failed, bash runs without the profile
in the inherited environment; only with snapshots turned off does each command run ``bash -lc``. A command too
long for an argument (the kernel caps one at 128 KiB) is passed as a script file instead.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_cli.events import ToolOutputDelta
from agent_cli.events import Warning as WarningEvent
from agent_cli.models.base import ToolSpec
from agent_cli.network.gate import Watch
from agent_cli.sandbox.guard import background_audit, guarded
from agent_cli.sandbox.policy import ESCALATION_PARAMETERS, command_argv, confine
from agent_cli.tools.background_tools import start_in_background
from agent_cli.tools.base import Tool, ToolContext, ToolError, ToolResult
from agent_cli.tools.capture import CapturedOutput, OutputCapture, decode_tail, new_spill_path
from agent_cli.tools.captured_text import format_captured
from agent_cli.tools.common import int_arg, output_policy, str_arg
from agent_cli.tools.process import run_process

LIVE_INTERVAL_S = 0.1  # at most this often a ToolOutputDelta
LIVE_CAP = 16 * 1024  # bytes per delta; when output is faster, only the latest part is shown
MAX_INLINE_COMMAND_BYTES = 32 * 1024  # longer commands go through a script file (argv limits)
MAX_TIMEOUT_MS = 24 * 60 * 60 * 1000  # a day; larger asks are clamped (and the output says so)

SPEC = ToolSpec(
    name="shell",
    description=(
        "Run a shell command (bash, with the user's login environment) and return its exit code, "
        "wall time and merged stdout+stderr. stdin is closed; on timeout the whole process group is killed (exit code "
        "124). Long output keeps head and tail; the full text is saved to a file you can page "
        "with read_file. Servers, watchers, long runs: run_in_background (then shell_output, shell_kill). "
        "Prefer read_file/grep/list_dir for reading and apply_patch for editing."
    ),
    parameters={
        "type": "object",
        "properties": {
            "command": {"type": "string", "description": "The command line."},
            "workdir": {"type": "string", "description": "Directory to run in (default: session cwd)."},
            "timeout_ms": {"type": "integer", "description": "Kill after this many ms (default 120000)."},
            "run_in_background": {"type": "boolean", "description": "Return at once with an id; no timeout."},
            "keep_alive": {"type": "boolean", "description": "Outlive the session (the user must approve)."},
            **ESCALATION_PARAMETERS,  # sandbox.py: how the model asks to leave the sandbox
        },
        "required": ["command"],
        "additionalProperties": False,
    },
)


def shell_argv(command: str | Path, snapshot: Path | None = None, *, login: bool | None = None) -> list[str]:
    """How to run ``command`` (text, or a script file holding it): with the login snapshot loaded
    through ``BASH_ENV`` (see :func:`shell_env`), else as a login shell unless ``login`` is False."""
    bash = shutil.which("bash")
    login = ["-l"] if (snapshot is None if login is None else login) else []
    if isinstance(command, Path):
        return [bash, *login, str(command)] if bash else ["sh", str(command)]
    return [bash, *login, "-c", command] if bash else ["sh", "-c", command]


def shell_env(env: dict[str, str] | None, snapshot: Path | None) -> dict[str, str] | None:
    if snapshot is None:
        return env
    return {**(os.environ if env is None else env), "BASH_ENV": str(snapshot)}


@contextlib.contextmanager
def command_source(command: str, ctx: ToolContext) -> Iterator[str | Path]:
    """``command`` itself, or for a long one a script file holding it (deleted afterwards)."""
    if len(command.encode("utf-8", "surrogateescape")) <= MAX_INLINE_COMMAND_BYTES:
        yield command
        return
    folder = ctx.data_dir / "tool-commands"
    folder.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(prefix="command-", suffix=".sh", dir=folder)
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as script:
        script.write(command)
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


@contextlib.contextmanager
def watching_network(ctx: ToolContext) -> Iterator[Watch | None]:
    """While a command runs through the network proxy: what it decided (and a way to ask the user)."""
    if ctx.network is None or ctx.sandbox is None or not ctx.sandbox.proxied:
        yield None
        return
    with ctx.network.watch(ctx.call_id, ctx.emit) as watch:
        yield watch


class _LiveOutput:
    """Throttled, bounded ToolOutputDelta events for front ends."""

    def __init__(self, ctx: ToolContext):
        self._ctx = ctx
        self._loop = asyncio.get_running_loop()
        self._pending = bytearray()
        self._skipped = 0  # bytes dropped since the last delta
        self._last = 0.0
        self._timer: asyncio.TimerHandle | None = None

    def feed(self, data: bytes) -> None:
        self._skipped += max(0, len(data) - LIVE_CAP)
        self._pending += data[-LIVE_CAP:]
        if len(self._pending) > LIVE_CAP:
            self._skipped += len(self._pending) - LIVE_CAP
            del self._pending[: len(self._pending) - LIVE_CAP]
        wait = self._last + LIVE_INTERVAL_S - self._loop.time()
        if wait <= 0:
            self.flush()
        elif self._timer is None:
            self._timer = self._loop.call_later(wait, self.flush)

    def flush(self) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._last = self._loop.time()
        if self._pending:
            text = decode_tail(bytes(self._pending))
            if self._skipped and "\n" in text:  # start at a whole line after a gap
                cut, text = text.split("\n", 1)
                self._skipped += len(cut.encode("utf-8", "replace")) + 1
            self._pending.clear()
            self._ctx.emit(ToolOutputDelta(call_id=self._ctx.call_id, text=text, skipped_bytes=self._skipped))
            self._skipped = 0


class ShellTool(Tool):
    spec = SPEC

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        command = str_arg(args, "command")
        workdir = ctx.resolve(args["workdir"]) if args.get("workdir") else ctx.cwd
        if not workdir.is_dir():
            raise ToolError(f"workdir {workdir} does not exist or is not a directory")
        notes: list[str] = []
        timeout_ms = int_arg(args, "timeout_ms", ctx.shell_timeout_ms, maximum=MAX_TIMEOUT_MS, notes=notes)
        snapshot = await self._snapshot(ctx)
        if args.get("run_in_background"):
            audit = None
            if ctx.sandbox is not None and ctx.sandbox.confines and ctx.background is not None:
                sandbox = ctx.sandbox
                audit = background_audit(sandbox.workspace_roots, sandbox.writable_roots, sandbox.read_only_files)
            with command_source(command, ctx) as source:
                argv = confine(
                    shell_argv(source, snapshot, login=ctx.shell_snapshot is None),
                    ctx.sandbox,
                    outlive_agent=bool(args.get("keep_alive")),
                )
                return await start_in_background(
                    ctx,
                    argv,
                    command,
                    workdir,
                    shell_env(ctx.env, snapshot),
                    keep_alive=bool(args.get("keep_alive")),
                    audit=audit,
                )
        if args.get("keep_alive"):
            raise ToolError("keep_alive applies only with run_in_background: true")
        live = _LiveOutput(ctx)
        capture = OutputCapture(
            new_spill_path(ctx.data_dir, ctx.call_id), count_chars=output_policy(ctx).kind == "bytes"
        )
        try:
            sandbox = ctx.sandbox if ctx.sandbox is not None and ctx.sandbox.confines else None
            roots = sandbox.workspace_roots if sandbox else ()
            writable = sandbox.writable_roots if sandbox else ()
            files = sandbox.read_only_files if sandbox else ()
            # what a command planted in protected places (a missing .agent/, .git...) is undone
            with (
                command_source(command, ctx) as source,
                guarded(roots, writable, files) as guard,
                watching_network(ctx) as network,
            ):
                # a failed snapshot means no login profile either
                argv = shell_argv(source, snapshot, login=ctx.shell_snapshot is None)
                # sandbox.py: bubblewrap / Landlock, under a supervisor; the client's terminal under ACP
                runner = ctx.command_runner or run_process
                result = await runner(
                    confine(argv, ctx.sandbox) if ctx.command_runner else command_argv(argv, ctx.sandbox),
                    cwd=workdir,
                    env=shell_env(ctx.env, snapshot),
                    capture=capture,
                    timeout_s=timeout_ms / 1000,
                    on_output=live.feed,
                )
        finally:
            live.flush()
        for refusal in guard.refused:  # sandbox_guard.py: the model and the user both see it
            ctx.emit(WarningEvent(refusal))
        notes += [f"refused: {refusal}" for refusal in guard.refused]
        notes += network.notes() if network is not None else []  # hosts the proxy refused, and how to allow them
        note = "".join(f"{line}\n" for line in notes)
        note += f"command timed out after {timeout_ms} ms\n" if result.timed_out else ""
        text = format_output(ctx, result.output, result.exit_code, result.duration, note)
        return ToolResult(text, success=result.exit_code == 0, exit_code=result.exit_code)

    @staticmethod
    async def _snapshot(ctx: ToolContext) -> Path | None:
        """The session's login-shell snapshot; None without one, or when it failed."""
        if ctx.shell_snapshot is None:
            return None
        path = await ctx.shell_snapshot.ready()
        if warning := ctx.shell_snapshot.take_warning():
            ctx.emit(WarningEvent(warning))
        return path


def format_output(ctx: ToolContext, captured: CapturedOutput, exit_code: int, duration: float, note: str = "") -> str:
    """``Exit code``, ``Wall time``, [``Total output lines``, spill file], ``Output:`` and the body."""
    return format_captured(ctx, captured, [f"Exit code: {exit_code}", f"Wall time: {duration:.1f} seconds"], note)
