"""What the model reads of a server's diagnostics: errors first, new ones only, under a budget.

A diagnostic is known by its severity, code, message and the text of its line (not the line's
number, which an edit above it shifts), so an error that was there before the edit is not
repeated, and neither is one reported after an earlier edit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent_cli.context.truncate import approx_tokens

SEVERITIES = {1: "error", 2: "warning", 3: "info", 4: "hint"}
SHOWN_SEVERITIES = (1, 2)  # information and hints are left out: they are not mistakes
MAX_MESSAGE_CHARS = 400
START, END = "<diagnostics>", "</diagnostics>"


@dataclass(frozen=True, slots=True)
class Diagnostic:
    path: str  # as shown: relative to the session's folder when inside it
    line: int  # 1-based
    column: int  # 1-based
    severity: int
    message: str
    code: str
    source: str
    line_text: str  # what the line said when the diagnostic came

    @property
    def key(self) -> tuple[str, int, str, str, str]:
        return (self.path, self.severity, self.code, self.message, self.line_text.strip())

    def line_for_model(self) -> str:
        code = f" [{self.code}]" if self.code else ""
        return f"{self.path}:{self.line}:{self.column}: {SEVERITIES.get(self.severity, 'error')}: {self.message}{code}"


def from_lsp(raw: Any, path: str, lines: list[str], source: str) -> Diagnostic | None:
    """One ``Diagnostic`` of a publishDiagnostics list; None when it is malformed or not shown."""
    if not isinstance(raw, dict):
        return None
    start = (raw.get("range") or {}).get("start") or {}
    severity = raw.get("severity") if raw.get("severity") in SEVERITIES else 1
    if severity not in SHOWN_SEVERITIES:
        return None
    line, column = start.get("line"), start.get("character")
    if not isinstance(line, int) or not isinstance(column, int):
        return None
    message = " ".join(str(raw.get("message") or "").split())[:MAX_MESSAGE_CHARS]
    code = raw.get("code")
    return Diagnostic(
        path,
        line + 1,
        column + 1,
        severity,
        message,
        "" if code is None else str(code)[:80],
        str(raw.get("source") or source)[:40],
        lines[line] if 0 <= line < len(lines) else "",
    )


def ordered(diagnostics: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Deduplicated, errors first, then by file and position."""
    unique = {d.key + (d.line, d.column): d for d in diagnostics}
    return sorted(unique.values(), key=lambda d: (d.severity, d.path, d.line, d.column, d.message))


def render(diagnostics: list[Diagnostic], servers: Iterable[str], token_limit: int) -> str:
    """The block added to the edit's output: as many lines as fit ``token_limit``, and a count of the rest."""
    errors = sum(1 for d in diagnostics if d.severity == 1)
    warnings = len(diagnostics) - errors
    head = f"{START}\nNew problems reported by {', '.join(sorted(set(servers)))} after this edit ({counts(errors, warnings)}):"
    lines = [head]
    used = approx_tokens(head) + 20
    left_out = 0
    for diagnostic in diagnostics:
        line = diagnostic.line_for_model()
        cost = approx_tokens(line) + 1
        if left_out or used + cost > token_limit:
            left_out += 1
            continue
        lines.append(line)
        used += cost
    if left_out:
        lines.append(f"…{left_out} more not shown (diagnostics budget); read the files to see them")
    lines.append(END)
    return "\n".join(lines)


def counts(errors: int, warnings: int) -> str:
    parts = [f"{errors} error{'s' * (errors != 1)}"] if errors else []
    parts += [f"{warnings} warning{'s' * (warnings != 1)}"] if warnings else []
    return ", ".join(parts) or "none"
