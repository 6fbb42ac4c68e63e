"""The status bar's part for code checks: the problems language servers see in the edited files,
and how the last lint/test run went (agent_cli/lsp/)."""

from __future__ import annotations

from agent_cli.lsp.code_checks import CodeChecks
from agent_cli.session import Session


def checks_part(session: Session) -> str:
    checks = session.checks
    if not isinstance(checks, CodeChecks):
        return ""
    parts = []
    if checks.lsp is not None and checks.lsp.servers:
        errors, warnings = checks.lsp.current_counts()
        parts.append(f"✗ {errors} ⚠ {warnings}" if errors or warnings else "✓ no problems")
    for kind, result in checks.project.last.items():
        parts.append(f"{kind} {'✓' if result.passed else '✗'}")
    return " · ".join(parts)
