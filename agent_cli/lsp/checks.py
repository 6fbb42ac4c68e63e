"""The project's own checks: ``lint_command`` and ``test_command``, run after a turn that changed
files (and by ``/lint`` and ``/test``), in the session's sandbox as the model's commands run.

A failure goes back to the model as a new ``<project_checks>`` item with the tail of the output,
and the turn goes on, at most ``check_rounds`` times in a turn; a pass, or a round in which the
model changed nothing, ends it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Literal

from agent_cli import events as ev
from agent_cli.context.fragments import PROJECT_CHECKS
from agent_cli.context.prompts import prompt_library
from agent_cli.tools.base import Tool, ToolContext

Kind = Literal["lint", "test"]
TAIL_LINES = 60
TAIL_CHARS = 6_000  # about 1,500 tokens: what a failure adds to the context at most


@dataclass(frozen=True)
class CheckResult:
    kind: Kind
    command: str
    exit_code: int | None
    output: str
    duration: float

    @property
    def passed(self) -> bool:
        return self.exit_code == 0

    @property
    def tail(self) -> str:
        lines = self.output.rstrip("\n").split("\n")[-TAIL_LINES:]
        return "\n".join(lines)[-TAIL_CHARS:]

    def event(self, sent: bool = False) -> ev.ProjectCheck:
        return ev.ProjectCheck(self.kind, self.command, self.exit_code, self.tail, self.duration, sent)


class ProjectChecks:
    def __init__(
        self,
        lint_command: str | None,
        test_command: str | None,
        rounds: int,
        timeout_ms: int,
        shell: Callable[[], Tool | None],
        agent_home: Path | None = None,  # where prompts/ may override the failure note
    ):
        configured: tuple[tuple[Kind, str | None], ...] = (("lint", lint_command), ("test", test_command))
        self.commands: dict[Kind, str] = {kind: command for kind, command in configured if command}
        self.rounds, self.timeout_ms, self._shell = rounds, timeout_ms, shell
        self.agent_home = agent_home
        self.changed = False  # files changed since the checks last ran
        self._turn = -1
        self._used = 0  # rounds sent back to the model in this turn
        self.last: dict[Kind, CheckResult] = {}

    def files_changed(self) -> None:
        self.changed = True

    async def run(self, kind: Kind, ctx: ToolContext) -> CheckResult | None:
        """Run one configured check now; None when it is not configured (or the shell tool is off)."""
        command, shell = self.commands.get(kind), self._shell()
        if command is None or shell is None:
            return None
        started = time.monotonic()
        # Its output is shown whole at the end; it runs here, not in an editor's terminal (ACP), where
        # no tool call of that id exists.
        quiet = replace(ctx, emit=lambda event: None, call_id=f"{kind}-check", command_runner=None)
        result = await shell.run({"command": command, "timeout_ms": self.timeout_ms}, quiet)
        exit_code = result.exit_code if result.exit_code != 124 else None
        check = CheckResult(kind, command, exit_code, result.output, time.monotonic() - started)
        self.last[kind] = check
        return check

    async def after_turn(
        self, turn: int, context: Callable[[], ToolContext], emit: Callable[[ev.Event], None]
    ) -> str | None:
        """Run the checks when the turn changed files; the note for the model when one failed and
        a round is left, else None (the turn ends). ``context``: the commands' (made only when one runs)."""
        if turn != self._turn:
            self._turn, self._used = turn, 0
        if not self.commands or not self.changed:
            return None
        self.changed = False
        for kind in ("lint", "test"):
            try:
                check = await self.run(kind, context())  # type: ignore[arg-type]
            except Exception as exc:  # noqa: BLE001 - a check that cannot run ends nothing but itself
                emit(ev.Warning(f"{kind}_command could not run: {exc}"))
                continue
            if check is None:
                continue
            send = not check.passed and self._used < self.rounds
            emit(check.event(sent=send))
            if not check.passed:
                if not send:
                    emit(ev.Warning(f"{kind}_command still fails after {self.rounds} round(s); the turn ends"))
                    return None
                self._used += 1
                return failure_note(check, self._used, self.rounds, self.agent_home)
        return None


def failure_note(check: CheckResult, round_: int, rounds: int, agent_home: Path | None = None) -> str:
    status = "timed out" if check.exit_code is None else f"exited with {check.exit_code}"
    body = prompt_library(agent_home).render(
        "project_check_failed.md",
        kind=check.kind,
        command=check.command,
        status=status,
        round=round_,
        rounds=rounds,
        tail=check.tail,
    )
    return PROJECT_CHECKS.wrap(body)
