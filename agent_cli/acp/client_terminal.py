"""Shell commands in the editor's terminal (ACP's `terminal/*` methods), when the client offers
them: the editor shows the command live, and the command is still ours to confine. The client
runs exactly the argv our own runner would (the sandbox launcher included) under `env -i` with
the session's scrubbed environment (from an owner-only file, not the command line other users
can read), so neither the sandbox nor the secret scrubbing is lost."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import signal
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.tools.capture import OutputCapture
from agent_cli.tools.process import ProcessResult

OUTPUT_BYTE_LIMIT = 1024 * 1024  # what the client keeps of a command's output (its tail)
TIMED_OUT = 124


class ClientTerminal:
    """A command runner with run_process's signature, for one tool call."""

    def __init__(self, conn: Any, session_id: str, call_id: str, emit: Callable[[ev.Event], None], folder: Path):
        self.conn, self.session_id, self.call_id, self.emit = conn, session_id, call_id, emit
        self.folder = folder  # where the environment file is written

    async def __call__(
        self,
        argv: Sequence[str],
        *,
        cwd: Path,
        capture: OutputCapture,
        timeout_s: float,
        env: dict[str, str] | None = None,
        on_output: Callable[[bytes], None] | None = None,
    ) -> ProcessResult:
        with environment_file(os.environ if env is None else env, self.folder) as path:
            return await self._run(
                ["env", "-i", "/bin/sh", "-c", LOAD_AND_RUN, str(path), *argv], cwd, capture, timeout_s, on_output
            )

    async def _run(
        self,
        command: list[str],
        cwd: Path,
        capture: OutputCapture,
        timeout_s: float,
        on_output: Callable[[bytes], None] | None,
    ) -> ProcessResult:
        started = time.monotonic()
        created = await self.conn.create_terminal(
            session_id=self.session_id,
            command=command[0],
            args=command[1:],
            cwd=str(cwd),
            output_byte_limit=OUTPUT_BYTE_LIMIT,
        )
        terminal_id = created.terminal_id
        self.emit(ev.ToolTerminal(self.call_id, terminal_id))
        ids = {"session_id": self.session_id, "terminal_id": terminal_id}
        timed_out = False
        try:
            try:
                exited = await asyncio.wait_for(self.conn.wait_for_terminal_exit(**ids), timeout_s)
                exit_code = exited.exit_code if exited.exit_code is not None else 128 + signal_number(exited.signal)
            except TimeoutError:
                timed_out, exit_code = True, TIMED_OUT
                await self.conn.kill_terminal(**ids)
            output = await self.conn.terminal_output(**ids)
        except asyncio.CancelledError:  # Esc or session/cancel: the command stops too
            with contextlib.suppress(Exception):
                await asyncio.shield(self.conn.kill_terminal(**ids))
            raise
        finally:
            with contextlib.suppress(Exception):
                await asyncio.shield(self.conn.release_terminal(**ids))
        data = output.output.encode("utf-8", "surrogateescape")
        capture.feed(data)
        if on_output is not None:
            on_output(data)
        return ProcessResult(exit_code, timed_out, time.monotonic() - started, capture.finish())


LOAD_AND_RUN = 'set -a; . "$0"; set +a; exec "$@"'  # $0: the environment file; $@: the command


@contextlib.contextmanager
def environment_file(env: Mapping[str, str], folder: Path) -> Iterator[Path]:
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    fd, name = tempfile.mkstemp(prefix="env-", suffix=".sh", dir=folder)  # 0600
    with os.fdopen(fd, "w", encoding="utf-8", errors="surrogateescape") as out:
        out.writelines(f"{key}={shlex.quote(value)}\n" for key, value in env.items() if key.isidentifier())
    try:
        yield Path(name)
    finally:
        Path(name).unlink(missing_ok=True)


def signal_number(name: str | None) -> int:
    try:
        return int(signal.Signals[name]) if name else 1
    except KeyError:
        return 1
