"""The session's background processes: started by ``shell`` with ``run_in_background``.

Each runs in its own process group (and the sandbox, like any command) with its merged output
appended to a log file under ``tool-outputs/`` (bounded memory: only a short tail stays in memory;
the file stops growing at ``LOG_MAX_BYTES``). ``shell_output`` reads what is new since the last
read, ``shell_kill`` stops one. When one exits, listeners (the front ends) hear it at once and the
model gets a note before its next request (:meth:`BackgroundProcesses.take_exit_notes`).

Every process ends with the session (:meth:`BackgroundProcesses.aclose`), and a watchdog process
(tools/bg_watchdog.py) kills them if the agent itself dies, found by process group and by a marker
in their environment (so a command that daemonizes with ``setsid`` is found too). Only a process
started with ``keep_alive``, which the user must approve, is left running.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from agent_cli import events as ev
from agent_cli.paths import open_private
from agent_cli.tools import bg_watchdog
from agent_cli.tools.capture import decode_tail, new_spill_path
from agent_cli.tools.process import TERM_GRACE_S, signal_group

LOG_MAX_BYTES = 256 * 1024 * 1024  # a process printing forever stops filling the disk here
TAIL_BYTES = 8 * 1024  # kept in memory for "last lines" in /ps and exit notices
LAST_LINES = 5
DETACHED_POLL_S = 0.5


@dataclass
class BackgroundProcess:
    id: str  # "bg1", "bg2"... what the model and /ps name it by
    command: str
    pid: int
    log_path: Path
    keep_alive: bool = False
    started: float = field(default_factory=time.monotonic)
    ended: float | None = None
    exit_code: int | None = None  # 128 + N when killed by signal N
    killed: bool = False  # stopped by shell_kill, /ps or the session's end
    exit_seen: bool = False  # a tool output already told the model it ended
    read_offset: int = 0  # bytes of the log already returned by shell_output
    bytes_written: int = 0
    bytes_dropped: int = 0  # beyond LOG_MAX_BYTES
    tail: bytearray = field(default_factory=bytearray, repr=False)
    refused: list[str] = field(default_factory=list)  # what it planted in protected places, undone

    @property
    def running(self) -> bool:
        return self.exit_code is None

    @property
    def total_bytes(self) -> int:
        if self.keep_alive:  # it writes the log itself (it must not depend on our pipe)
            with contextlib.suppress(OSError):
                return self.log_path.stat().st_size
        return self.bytes_written + self.bytes_dropped

    def runtime(self) -> float:
        return (self.ended if self.ended is not None else time.monotonic()) - self.started

    def last_lines(self, count: int = LAST_LINES) -> list[str]:
        tail = bytes(self.tail) if not self.keep_alive else _file_tail(self.log_path)
        lines = decode_tail(tail).rstrip("\n").splitlines()
        return lines[-count:]

    def tail_text(self, max_bytes: int = 16 * 1024) -> str:
        """The end of its output, from the log (for a viewer; the model uses shell_output)."""
        return decode_tail(_file_tail(self.log_path, max_bytes))

    def status(self) -> str:
        if self.running:
            return "running"
        if self.killed:
            return f"killed (exit code {self.exit_code})"
        return f"exited with code {self.exit_code}"

    def info(self) -> ev.BackgroundProcessInfo:
        return ev.BackgroundProcessInfo(
            self.id,
            self.command,
            self.pid,
            self.runtime(),
            self.exit_code,
            self.killed,
            tuple(self.last_lines()),
            str(self.log_path),
            self.keep_alive,
        )


class _Recorder(asyncio.SubprocessProtocol):
    """Appends the pipe's bytes to the log file and keeps a short tail."""

    def __init__(self, proc: BackgroundProcess, log: BinaryIO, on_exit: Callable[[], None]):
        self.proc = proc
        self.log = log
        self.on_exit = on_exit
        loop = asyncio.get_running_loop()
        self.output = asyncio.Event()  # some output arrived (the start waits briefly for it)
        self.exited: asyncio.Future[None] = loop.create_future()
        self.drained: asyncio.Future[None] = loop.create_future()

    def pipe_data_received(self, fd: int, data: bytes) -> None:
        proc = self.proc
        room = LOG_MAX_BYTES - proc.bytes_written
        kept = data[: max(room, 0)]
        if kept and not self.log.closed:
            try:
                self.log.write(kept)
                self.log.flush()  # shell_output reads the file while we write it
                proc.bytes_written += len(kept)
            except OSError:
                kept = b""
        proc.bytes_dropped += len(data) - len(kept)
        proc.tail += data[-TAIL_BYTES:]
        del proc.tail[: max(0, len(proc.tail) - TAIL_BYTES)]
        self.output.set()

    def pipe_connection_lost(self, fd: int, exc: Exception | None) -> None:
        if not self.drained.done():
            self.drained.set_result(None)

    def process_exited(self) -> None:
        if not self.exited.done():
            self.exited.set_result(None)
            self.on_exit()


class _Watchdog:
    """The helper process that outlives a crash of the agent (tools/bg_watchdog.py)."""

    def __init__(self, token: str):
        self._token = token
        self._process: subprocess.Popen[bytes] | None = None

    def add(self, pgid: int) -> None:
        self._send(f"add {pgid}\n")

    def forget(self, pgid: int) -> None:
        self._send(f"forget {pgid}\n")

    def _send(self, line: str) -> None:
        if self._process is None:
            self._process = subprocess.Popen(
                [sys.executable, "-I", "-S", bg_watchdog.__file__, self._token],
                stdin=subprocess.PIPE,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                close_fds=True,
            )
        with contextlib.suppress(OSError, ValueError):
            self._process.stdin.write(line.encode())  # type: ignore[union-attr]
            self._process.stdin.flush()  # type: ignore[union-attr]

    def close(self) -> None:
        """End of the session: the watchdog sweeps once more (daemons) and exits."""
        if self._process is None:
            return
        with contextlib.suppress(OSError, ValueError):
            self._process.stdin.close()  # type: ignore[union-attr]
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._process.wait(timeout=5)

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process is not None else None


class BackgroundProcesses:
    """One session's background processes, by id."""

    def __init__(self, data_dir: Path):
        self._data_dir = data_dir
        self._processes: dict[str, BackgroundProcess] = {}
        self._transports: dict[str, asyncio.SubprocessTransport] = {}
        self._recorders: dict[str, _Recorder] = {}
        self._logs: dict[str, BinaryIO] = {}
        self._detached: dict[str, asyncio.Future[None]] = {}  # keep_alive processes' exit pollers
        self._listeners: list[Callable[[ev.Event], None]] = []
        self._unnoted: list[str] = []  # exited, not yet told to the model
        self.token = uuid.uuid4().hex  # this session's marker value
        self._watchdog = _Watchdog(self.token)
        self._count = 0
        self._audits: dict[str, Callable[[], list[str]]] = {}  # sandbox_guard: run when a process ends

    # --- what front ends use ------------------------------------------------------------

    def add_listener(self, listener: Callable[[ev.Event], None]) -> None:
        """``listener`` gets a BackgroundProcessExited event the moment a process ends (and a
        BackgroundProcessStarted when one starts)."""
        self._listeners.append(listener)

    def list(self) -> list[BackgroundProcess]:
        return list(self._processes.values())

    def get(self, process_id: str) -> BackgroundProcess | None:
        return self._processes.get(process_id.strip())

    @property
    def running_count(self) -> int:
        return sum(proc.running for proc in self._processes.values())

    @property
    def watchdog_pid(self) -> int | None:
        return self._watchdog.pid

    # --- starting and stopping -----------------------------------------------------------

    async def start(
        self,
        argv: Sequence[str],
        *,
        command: str,
        cwd: Path,
        env: dict[str, str] | None,
        keep_alive: bool = False,
        audit: Callable[[], list[str]] | None = None,
    ) -> BackgroundProcess:
        """``audit``: called when the process ends; what it returns (protected files it changed,
        undone) goes to the model with the exit note."""
        self._count += 1
        process_id = f"bg{self._count}"
        log_path = new_spill_path(self._data_dir, f"background-{process_id}")
        log = open_private(log_path)
        env = dict(os.environ if env is None else env)
        if not keep_alive:  # how the watchdog finds what left the process group
            env[bg_watchdog.MARKER_VARIABLE] = f"{self.token}.{process_id}"
        proc = BackgroundProcess(process_id, command, 0, log_path, keep_alive)
        if keep_alive:
            return self._start_detached(proc, argv, cwd, env, log)
        loop = asyncio.get_running_loop()
        try:
            transport, recorder = await loop.subprocess_exec(
                lambda: _Recorder(proc, log, lambda: self._exited(process_id)),
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,  # its own group: killed as a whole
            )
        except BaseException:
            log.close()
            raise
        proc.pid = transport.get_pid()
        if audit is not None:
            self._audits[process_id] = audit
        self._processes[process_id] = proc
        self._transports[process_id] = transport
        self._recorders[process_id] = recorder
        self._logs[process_id] = log
        self._watchdog.add(proc.pid)
        self._tell(ev.BackgroundProcessStarted(proc.info()))
        return proc

    def _start_detached(
        self, proc: BackgroundProcess, argv: Sequence[str], cwd: Path, env: dict[str, str], log: BinaryIO
    ) -> BackgroundProcess:
        """A ``keep_alive`` process writes its log itself and is polled for its exit: it must
        outlive the agent, so no pipe of ours (and no transport that kills it when closed)."""
        try:
            popen = subprocess.Popen(
                list(argv),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=cwd,
                env=env,
                start_new_session=True,
            )
        finally:
            log.close()
        proc.pid = popen.pid
        self._processes[proc.id] = proc
        self._detached[proc.id] = asyncio.ensure_future(self._poll_detached(proc, popen))
        self._tell(ev.BackgroundProcessStarted(proc.info()))
        return proc

    async def _poll_detached(self, proc: BackgroundProcess, popen: subprocess.Popen[bytes]) -> None:
        while (code := popen.poll()) is None:
            await asyncio.sleep(DETACHED_POLL_S)
        proc.exit_code = 128 - code if code < 0 else code
        proc.ended = time.monotonic()
        self._unnoted.append(proc.id)
        self._tell(ev.BackgroundProcessExited(proc.info()))

    async def wait_for_output(self, proc: BackgroundProcess, timeout_s: float) -> None:
        """Until the process printed something or exited, at most ``timeout_s``; then a moment
        more so a burst of first lines arrives whole."""
        recorder = self._recorders.get(proc.id)
        if recorder is None:  # keep_alive: no pipe to watch
            await asyncio.wait([self._detached[proc.id]], timeout=timeout_s)
            return
        waiter = asyncio.ensure_future(recorder.output.wait())
        try:
            await asyncio.wait([waiter, recorder.exited], timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        finally:
            waiter.cancel()
        if recorder.exited.done():
            await asyncio.wait([recorder.drained], timeout=0.5)
        elif recorder.output.is_set():
            await asyncio.sleep(0.1)

    async def kill(self, proc: BackgroundProcess) -> None:
        """Stop ``proc``'s whole group (SIGTERM, then SIGKILL) and what it daemonized."""
        recorder = self._recorders.get(proc.id)
        ended: asyncio.Future[None] = recorder.exited if recorder is not None else self._detached[proc.id]
        if proc.running:
            proc.killed = True
            signal_group(proc.pid, signal.SIGTERM)
            await asyncio.wait([ended], timeout=TERM_GRACE_S)
        signal_group(proc.pid, signal.SIGKILL)  # stragglers, also after the leader exited
        if not proc.keep_alive:
            self._kill_marked(f"{self.token}.{proc.id}")
        await asyncio.wait([ended], timeout=2 * DETACHED_POLL_S)
        if recorder is not None:
            await asyncio.wait([recorder.drained], timeout=TERM_GRACE_S)

    async def aclose(self) -> None:
        """The session ends: every process not started with ``keep_alive`` ends with it."""
        doomed = [proc for proc in self._processes.values() if not proc.keep_alive]
        for proc in doomed:
            if proc.running:
                proc.killed = True
                signal_group(proc.pid, signal.SIGKILL)
            else:
                signal_group(proc.pid, signal.SIGKILL)  # children it left in its group
        self._kill_marked(self.token)
        waits = [self._recorders[proc.id].exited for proc in doomed]
        if waits:
            await asyncio.wait(waits, timeout=2 * TERM_GRACE_S)
        for process_id, transport in self._transports.items():
            transport.close()
            self._logs[process_id].close()
        self._transports.clear()
        for poller in self._detached.values():
            poller.cancel()  # keep_alive processes go on; we stop watching them
        self._listeners.clear()
        await asyncio.to_thread(self._watchdog.close)

    @staticmethod
    def _kill_marked(token: str) -> None:
        for pid in bg_watchdog.marked_pids(token):
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)

    # --- exits ------------------------------------------------------------------------

    def _exited(self, process_id: str) -> None:
        proc = self._processes.get(process_id)
        transport = self._transports.get(process_id)
        if proc is None or transport is None:  # exited while start() was still setting up
            asyncio.get_running_loop().call_soon(self._exited, process_id)
            return
        code = transport.get_returncode()
        proc.exit_code = -1 if code is None else 128 - code if code < 0 else code
        proc.ended = time.monotonic()
        asyncio.ensure_future(self._announce(proc))

    async def _announce(self, proc: BackgroundProcess) -> None:
        recorder = self._recorders[proc.id]
        await asyncio.wait([recorder.drained], timeout=0.5)  # the last lines, before they are shown
        if not _group_alive(proc.pid):
            self._watchdog.forget(proc.pid)  # the group id may be reused by an unrelated process
        if (audit := self._audits.pop(proc.id, None)) is not None:
            proc.refused += audit()
        self._unnoted.append(proc.id)
        self._tell(ev.BackgroundProcessExited(proc.info()))

    def take_exit_notes(self) -> list[str]:
        """One line per process that ended since the last call, for the model."""
        notes = []
        for process_id in self._unnoted:
            proc = self._processes[process_id]
            notes += [f"Background process {proc.id}: refused: {line}" for line in proc.refused]
            if proc.killed or proc.exit_seen:
                continue  # stopped on purpose, or the model already read that it ended
            unread = proc.total_bytes - proc.read_offset
            more = f"; {unread} bytes of output not read yet (shell_output)" if unread > 0 else ""
            notes.append(
                f"Background process {proc.id} (`{_short(proc.command)}`, pid {proc.pid}) "
                f"{proc.status()} after {proc.runtime():.1f} s{more}."
            )
        self._unnoted.clear()
        return notes

    def _tell(self, event: ev.Event) -> None:
        for listener in list(self._listeners):
            with contextlib.suppress(Exception):  # a front end's bug must not stop the bookkeeping
                listener(event)


def _file_tail(path: Path, max_bytes: int = TAIL_BYTES) -> bytes:
    try:
        with open(path, "rb") as handle:
            handle.seek(max(0, os.path.getsize(path) - max_bytes))
            return handle.read(max_bytes)
    except OSError:
        return b""


def _group_alive(pgid: int) -> bool:
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _short(command: str, limit: int = 80) -> str:
    command = " ".join(command.split())
    return command if len(command) <= limit else command[: limit - 1] + "…"
