"""Run the status line command: the session JSON on stdin, its first line of stdout back.

It runs in the session's folder with the session's scrubbed environment, in its own process group,
and is killed after :data:`TIMEOUT` seconds (a slow line must not pile up runs). A non-zero exit,
a timeout or no output blanks the line, as in Claude Code.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.sandbox.policy import supervised_argv
from agent_cli.tools.process import communicate_or_kill

TIMEOUT = 10.0
MAX_CHARS = 2_000  # of the first line


async def run_status_line(
    command: str, payload: dict[str, Any], cwd: Path, env: Mapping[str, str] | None = None
) -> tuple[str, str | None]:
    """(its first line, or "" when it fails; the problem, or None)."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *supervised_argv(["/bin/sh", "-c", command]),  # ends with the agent
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(os.environ if env is None else env),
            start_new_session=True,
        )
    except OSError as exc:
        return "", f"cannot start it: {exc.strerror or exc}"
    try:
        out, err = await communicate_or_kill(proc, TIMEOUT, json.dumps(payload).encode("utf-8"))
    except TimeoutError:
        return "", f"it took longer than {TIMEOUT:g} s and was stopped"
    if proc.returncode != 0:
        detail = err.decode("utf-8", "replace").strip().splitlines()
        return "", f"exit code {proc.returncode}" + (f": {detail[-1]}" if detail else "")
    lines = out.decode("utf-8", "replace").splitlines()
    return (lines[0][:MAX_CHARS] if lines else ""), None
