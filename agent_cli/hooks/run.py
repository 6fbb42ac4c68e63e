"""How one hook ended, whatever its type: a command's exit code and output, an http hook's
answer, a prompt hook's verdict, all read the same way by ``session/hooks.py``."""

from __future__ import annotations

from dataclasses import dataclass

from agent_cli.hooks.spec import HookSpec


@dataclass(frozen=True, slots=True)
class HookRun:
    """One hook process (or request) and how it ended."""

    spec: HookSpec
    exit_code: int | None  # an http or prompt hook that answered counts as 0
    stdout: str = ""  # a command's stdout, an http hook's response body, a prompt hook's verdict as JSON
    stderr: str = ""
    timed_out: bool = False
    error: str | None = None  # it could not be started (or reached)
