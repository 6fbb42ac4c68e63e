"""Run the status line command: the session JSON on stdin, its first line of stdout back.

It runs in the session's folder with the session's scrubbed environment, in its own process group,
and is killed after :data:`TIMEOUT` seconds (a slow line must not pile up runs). A non-zero exit,
a timeout or no output blanks the line, as in Claude Code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agent_cli.tools.process import run_supervised

TIMEOUT = 10.0
MAX_CHARS = 2_000  # of the first line


async def run_status_line(
    command: str, payload: dict[str, Any], cwd: Path, env: Mapping[str, str] | None = None
) -> tuple[str, str | None]:
    """(its first line, or "" when it fails; the problem, or None)."""
    stdin = json.dumps(payload).encode("utf-8")
    try:
        run = await run_supervised(["/bin/sh", "-c", command], cwd=cwd, env=env, timeout_s=TIMEOUT, stdin=stdin)
    except TimeoutError:  # an OSError too: first
        return "", f"it took longer than {TIMEOUT:g} s and was stopped"
    except OSError as exc:
        return "", f"cannot start it: {exc.strerror or exc}"
    if run.returncode != 0:
        detail = run.stderr.decode("utf-8", "replace").strip().splitlines()
        return "", f"exit code {run.returncode}" + (f": {detail[-1]}" if detail else "")
    lines = run.stdout.decode("utf-8", "replace").splitlines()
    return (lines[0][:MAX_CHARS] if lines else ""), None
