"""Run a ``` !`cmd` ``` for the user before the prompt is sent.

The command goes through the same approval policy as the model's shell calls (``agent exec``:
the policy decides, nothing asks) and through the ``shell`` tool when the session has one, so it
gets the same sandbox, timeout and output truncation. The front ends see it as a tool cell.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import time
from pathlib import Path

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.expand import CommandRun, RunCommand
from agent_cli.items import ToolCall
from agent_cli.sandbox.policy import supervised_argv
from agent_cli.session.session import Emit, Session
from agent_cli.tools.process import TIMEOUT_EXIT_CODE, communicate_or_kill

_ids = itertools.count(1)


def session_command_runner(session: Session, emit: Emit) -> RunCommand:
    async def run(command: str) -> CommandRun:
        call_id = f"user-cmd-{next(_ids)}"
        args = {"command": command}
        emit(ev.ToolCallBegin(call_id, "shell", args))
        started = time.monotonic()
        try:
            denial = await session.approvals.check(call_id, "shell", args, emit)
            if denial:
                emit(ev.ToolCallEnd(call_id, "shell", args, denial, False, time.monotonic() - started))
                raise InputError(f"!`{command}` was not run: {denial}")
            if "shell" in session.tools:
                call = ToolCall(call_id, "shell", json.dumps(args))
                result = await session.tools.dispatch(call, session.tool_context(call_id, emit))
                output, exit_code, success = result.output, result.exit_code, result.success
            else:
                limit = session.tool_output_limit * 4
                output, exit_code = await run_bash(command, session.config.cwd, session.config.shell_timeout_ms, limit)
                success = exit_code == 0
        finally:
            session.approvals.end_call(call_id)  # as a model's call (session/tool_call.py)
        emit(ev.ToolCallEnd(call_id, "shell", args, output, success, time.monotonic() - started, exit_code))
        return CommandRun(output, exit_code)

    return run


async def run_bash(command: str, cwd: Path, timeout_ms: int, max_bytes: int) -> tuple[str, int]:
    """A plain ``bash -c`` for sessions without a shell tool: merged output, head and tail kept."""
    process = await asyncio.create_subprocess_exec(
        *supervised_argv(["bash", "-c", command]),
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        data, _ = await communicate_or_kill(process, timeout_ms / 1000)  # killed also when the user interrupts
        exit_code = process.returncode if process.returncode is not None else -1
        note = ""
    except TimeoutError:
        data, _ = await process.communicate()  # what is left in the pipe (the cancelled read's share is lost)
        exit_code, note = TIMEOUT_EXIT_CODE, f"\n(timed out after {timeout_ms} ms)"
    text = data.decode("utf-8", errors="replace")
    if len(text) > max_bytes:
        half = max_bytes // 2
        text = f"{text[:half]}\n…{len(text) - 2 * half} chars truncated…\n{text[-half:]}"
    return f"Exit code: {exit_code}\nOutput:\n{text}{note}", exit_code
