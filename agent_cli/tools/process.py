"""Run a command in its own process group, stream its merged output, kill the group on timeout.

Output goes chunk by chunk into an ``OutputCapture`` (bounded memory) and an optional callback
(live display). stdin is closed so a command waiting for input gets EOF instead of hanging.
On timeout or cancellation the whole group (children and grandchildren) is killed.
:func:`communicate_or_kill` does the same for a short command whose whole output is wanted at once
(``!cmd`` without a shell tool, git queries), and :func:`run_supervised` starts such a command
under the launcher's supervision (hooks, the status line, notify).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from agent_cli.sandbox.policy import supervised_argv
from agent_cli.tools.capture import CapturedOutput, OutputCapture

TERM_GRACE_S = 0.5  # between SIGTERM and SIGKILL on timeout
DRAIN_GRACE_S = 0.5  # after exit, wait this long for background jobs still holding the pipe
TIMEOUT_EXIT_CODE = 124
PIPE_BUFFER = 1 << 20


@dataclass(frozen=True, slots=True)
class ProcessResult:
    exit_code: int  # 128 + N when killed by signal N; 124 on timeout
    timed_out: bool
    duration: float
    output: CapturedOutput


@dataclass(frozen=True, slots=True)
class Finished:
    """How a supervised command ended: its exit code and what it wrote."""

    returncode: int | None
    stdout: bytes
    stderr: bytes


class WatchedProcess(asyncio.SubprocessProtocol):
    """A child's protocol that knows when it exited and when its output pipe closed."""

    def __init__(self) -> None:
        loop = asyncio.get_running_loop()
        self.exited: asyncio.Future[None] = loop.create_future()
        self.drained: asyncio.Future[None] = loop.create_future()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.drained.done():
            self.drained.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)


class _Collector(WatchedProcess):
    def __init__(self, capture: OutputCapture, on_output: Callable[[bytes], None] | None):
        super().__init__()
        self.capture = capture
        self.on_output = on_output

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        self.capture.feed(data)
        if self.on_output is not None:
            self.on_output(data)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    capture: OutputCapture,
    timeout_s: float,
    env: dict[str, str] | None = None,
    on_output: Callable[[bytes], None] | None = None,
) -> ProcessResult:
    loop = asyncio.get_running_loop()
    start = time.monotonic()
    spawn = asyncio.ensure_future(
        loop.subprocess_exec(
            lambda: _Collector(capture, on_output),
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=env,
            start_new_session=True,  # its own process group, so we can kill the whole tree
        )
    )
    try:
        transport, proto = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        # Stopped while the process was starting. Left alone, asyncio would kill only the shell
        # and then wait for the pipe its children still hold (a `sleep 30` held Esc for 30 s):
        # let the start finish, then kill the whole group.
        with contextlib.suppress(Exception):
            transport, proto = await spawn
            signal_group(transport.get_pid(), signal.SIGKILL)
            await _reaped(proto)
            transport.close()
        capture.finish()
        raise
    pgid = transport.get_pid()
    _widen_pipe(transport)
    timed_out = False
    try:
        try:
            await asyncio.wait_for(asyncio.shield(proto.exited), timeout_s)
        except TimeoutError:
            timed_out = True
            await _terminate_group(pgid, proto.exited)
        await asyncio.wait([proto.drained], timeout=DRAIN_GRACE_S)
    except BaseException:  # cancelled (or anything else): leave nothing running
        await _stop_group(pgid, proto)
        await _reaped(proto)
        capture.finish()  # closes the spill file
        raise
    finally:
        transport.close()
    returncode = transport.get_returncode()
    duration = time.monotonic() - start
    if timed_out:
        exit_code = TIMEOUT_EXIT_CODE
    elif returncode is None:
        exit_code = -1
    elif returncode < 0:
        exit_code = 128 - returncode
    else:
        exit_code = returncode
    return ProcessResult(exit_code, timed_out, duration, capture.finish())


async def _terminate_group(pgid: int, exited: asyncio.Future[None]) -> None:
    signal_group(pgid, signal.SIGTERM)
    await asyncio.wait([exited], timeout=TERM_GRACE_S)
    signal_group(pgid, signal.SIGKILL)  # stragglers that ignored SIGTERM
    await asyncio.wait([exited], timeout=TERM_GRACE_S)


async def _stop_group(pgid: int, proto: _Collector) -> None:
    """SIGTERM first, so the launcher at the head of the group (sandbox/launcher.py) can end what the
    command moved out of it (``setsid``), then SIGKILL for whatever is left."""
    signal_group(pgid, signal.SIGTERM)
    with contextlib.suppress(BaseException):  # a second cancellation: the caller re-raises the first
        await asyncio.wait([proto.exited], timeout=TERM_GRACE_S)
    signal_group(pgid, signal.SIGKILL)


async def _reaped(proto: _Collector) -> None:
    """Wait (briefly) until asyncio's child watcher has reaped the killed process. Closing the
    transport first polls the process itself, racing the watcher's ``waitpid``: when the poll
    wins, the watcher logs "Unknown child process pid ..." into the user's output."""
    with contextlib.suppress(BaseException):  # a second cancellation: the caller re-raises the first
        await asyncio.wait([proto.exited], timeout=TERM_GRACE_S)


def _widen_pipe(transport: asyncio.SubprocessTransport) -> None:
    """A 1 MiB pipe buffer: fewer, larger reads when a command prints a lot (Linux only)."""
    pipe = transport.get_pipe_transport(1)
    set_size = getattr(fcntl, "F_SETPIPE_SZ", None)
    if pipe is None or set_size is None:
        return
    with contextlib.suppress(OSError, AttributeError, ValueError):
        fcntl.fcntl(pipe.get_extra_info("pipe").fileno(), set_size, PIPE_BUFFER)


async def communicate_or_kill(
    process: asyncio.subprocess.Process, timeout_s: float, stdin: bytes | None = None
) -> tuple[bytes, bytes]:
    """``process.communicate(stdin)`` within ``timeout_s`` (else TimeoutError). At the limit or on
    cancellation the process's whole group is killed and the process reaped: start it with
    ``start_new_session=True``."""
    try:
        return await asyncio.wait_for(process.communicate(stdin), timeout_s)
    finally:
        if process.returncode is None:
            signal_group(process.pid, signal.SIGTERM)  # a supervised command's launcher cleans up
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), TERM_GRACE_S)
            signal_group(process.pid, signal.SIGKILL)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(process.wait(), TERM_GRACE_S)


async def run_supervised(
    argv: Sequence[str], *, cwd: Path, env: Mapping[str, str] | None, timeout_s: float, stdin: bytes | None = None
) -> Finished:
    """``argv`` under the launcher's supervision, so that it and whatever it leaves running end with
    it or with the agent; in its own process group, in ``env`` (else this process's), reading
    ``stdin`` (else nothing). Raises OSError when it cannot start, TimeoutError at ``timeout_s``;
    at the limit or on cancellation its whole group is killed first."""
    process = await asyncio.create_subprocess_exec(
        *supervised_argv(argv),
        stdin=asyncio.subprocess.DEVNULL if stdin is None else asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=dict(os.environ if env is None else env),
        start_new_session=True,
    )
    out, err = await communicate_or_kill(process, timeout_s, stdin)
    return Finished(process.returncode, out, err)


def signal_group(pgid: int, sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):  # gone already, or not ours to signal
        os.killpg(pgid, sig)
