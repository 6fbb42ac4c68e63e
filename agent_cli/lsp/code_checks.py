"""What the session holds of this package: diagnostics after edits, the project's checks after a
turn, and the servers' end with the session (``SessionParts.checks``; a child borrows its parent's).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

from agent_cli import events as ev
from agent_cli.lsp.checks import CheckResult, Kind, ProjectChecks
from agent_cli.lsp.manager import LspManager
from agent_cli.tools.base import ToolContext, ToolResult

log = logging.getLogger(__name__)
Emit = Callable[[ev.Event], None]


class CodeChecks:
    def __init__(self, lsp: LspManager | None, project: ProjectChecks):
        self.lsp = lsp  # None: lsp = false
        self.project = project
        self._started = False

    def start(self) -> None:
        """Start the servers of the project's languages (needs a running event loop)."""
        if self.lsp is not None and not self._started:
            try:
                asyncio.get_running_loop()
            except RuntimeError:
                return
            self._started = True
            self.lsp.start()

    async def after_edit(self, call_id: str, result: ToolResult, cwd: Path, emit: Emit) -> ToolResult:
        """``result`` of an edit, with what the servers reported new after it. Never fails the edit."""
        self.project.files_changed()
        if self.lsp is None or not result.changes:
            return result
        try:
            report = await self.lsp.after_edit(result.changes, cwd)
        except Exception:  # noqa: BLE001 - a server's trouble costs the edit its diagnostics, nothing more
            log.exception("language server diagnostics failed")
            return result
        if not report.text:
            return result
        errors = sum(1 for d in report.diagnostics if d.severity == 1)
        emit(
            ev.Diagnostics(
                call_id,
                tuple(d.line_for_model() for d in report.diagnostics),
                errors,
                len(report.diagnostics) - errors,
                tuple(sorted(set(report.servers))),
                report.waited,
            )
        )
        return replace(result, output=f"{result.output}\n\n{report.text}")

    async def after_turn(self, turn: int, context: Callable[[], ToolContext], emit: Emit) -> str | None:
        return await self.project.after_turn(turn, context, emit)

    async def run_check(self, kind: Kind, ctx: ToolContext) -> CheckResult | None:
        return await self.project.run(kind, ctx)

    def status_lines(self) -> list[str]:
        lines = []
        if self.lsp is None:
            lines.append("language servers: off (lsp = false)")
        else:
            servers = self.lsp.status_lines()
            lines.append("language servers: " + ("; ".join(servers) if servers else "none started yet"))
            totals = self.lsp.totals
            lines.append(
                f"diagnostics: {totals['errors']} error(s), {totals['warnings']} warning(s) reported; "
                f"about {self.lsp.reported_tokens:,} tokens added"
            )
        for kind in ("lint", "test"):
            command = self.project.commands.get(kind)  # type: ignore[call-overload]
            last = self.project.last.get(kind)  # type: ignore[call-overload]
            state = "" if last is None else (" (last run passed)" if last.passed else " (last run failed)")
            lines.append(f"{kind}_command: {command or 'not set'}{state}")
        return lines

    async def aclose(self) -> None:
        if self.lsp is not None:
            await self.lsp.aclose()
