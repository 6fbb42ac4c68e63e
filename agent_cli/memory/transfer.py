"""Export and import memories as JSON lines: one ``Memory.to_dict()`` object per line.

Import goes through the same gate and duplicate check as any save; a line that is refused is
reported by number and the rest carry on.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from agent_cli.memory.book import MemoryBook
from agent_cli.memory.model import SCOPES, MemoryError, check_scope


def export_lines(book: MemoryBook, scopes: Iterable[str] = SCOPES) -> Iterator[str]:
    for scope, memories in book.newest(scopes).items():
        for memory in reversed(memories):  # oldest first, so an import keeps the order
            yield json.dumps(memory.to_dict(), ensure_ascii=False)


@dataclass
class ImportReport:
    added: int = 0
    updated: int = 0
    problems: list[str] = field(default_factory=list)


def import_lines(book: MemoryBook, lines: Iterable[str], scope: str | None = None) -> ImportReport:
    """Save each line's memory in its own scope (or ``scope`` for all of them)."""
    report = ImportReport()
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict) or not isinstance(record.get("text"), str):
                raise MemoryError("expected an object with a `text` string")
            target = check_scope(scope or str(record.get("scope") or "project"))
            tags = record.get("tags") or []
            if not isinstance(tags, list) or not all(isinstance(tag, str) for tag in tags):
                raise MemoryError("`tags` must be an array of strings")
            confidence = record.get("confidence")
            if confidence is not None and (isinstance(confidence, bool) or not isinstance(confidence, (int, float))):
                raise MemoryError("`confidence` must be a number")
            created = record.get("created") if isinstance(record.get("created"), str) else None
            saved = book.save(
                record["text"], target, tags=tags, confidence=confidence, source="import", created=created
            )
        except (ValueError, MemoryError) as exc:
            report.problems.append(f"line {number}: {exc}")
            continue
        if saved.updated:
            report.updated += 1
        else:
            report.added += 1
    return report
