"""``/lint`` and ``/test``: run the project's configured checks now (lsp/checks.py) and show the result."""

from __future__ import annotations

from agent_cli import events as ev
from agent_cli.commands.errors import InputError
from agent_cli.commands.invocation import Invocation
from agent_cli.lsp.checks import Kind
from agent_cli.lsp.code_checks import CodeChecks


async def run_check_command(inv: Invocation, kind: Kind) -> None:
    checks = inv.session.checks
    if not isinstance(checks, CodeChecks) or kind not in checks.project.commands:
        raise InputError(f"no {kind}_command is configured (set it in .agent/config.toml; /init suggests one)")
    result = await checks.run_check(kind, inv.session.tool_context(f"{kind}-command", inv.emit))
    if result is None:
        raise InputError(f"/{kind} needs the shell tool")
    inv.emit(result.event())
    verdict = "passed" if result.passed else "timed out" if result.exit_code is None else f"failed ({result.exit_code})"
    inv.emit(ev.Notice(f"`{result.command}` {verdict} in {result.duration:.1f} s\n{result.tail}", title=kind))


async def lint_command(inv: Invocation) -> None:
    await run_check_command(inv, "lint")


async def test_command(inv: Invocation) -> None:
    await run_check_command(inv, "test")
