"""A memory, its scope and its id as people type it (``p12``: memory 12 of the project scope)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import datetime, timezone

SCOPES = ("session", "project", "user")  # highest recall priority first
SOURCES = ("user", "model", "import")
PREFIX = {"session": "s", "project": "p", "user": "u"}
_ID = re.compile(r"([spu])(\d+)\Z")


class MemoryError(Exception):  # noqa: A001 - the package's own error, named for what it is about
    """A memory operation that cannot be done; the message is meant for the user or the model."""


@dataclass(frozen=True, slots=True)
class Memory:
    id: int
    scope: str
    text: str
    tags: tuple[str, ...] = ()
    confidence: float = 1.0
    source: str = "user"
    created: str = ""
    updated: str = ""
    last_used: str | None = None
    use_count: int = 0
    terms: frozenset[str] = field(default=frozenset(), compare=False)  # stems the text is matched by

    @property
    def ref(self) -> str:
        return format_ref(self.scope, self.id)

    def to_dict(self) -> dict[str, object]:
        return {
            "id": self.ref,
            "scope": self.scope,
            "text": self.text,
            "tags": list(self.tags),
            "confidence": self.confidence,
            "source": self.source,
            "created": self.created,
            "updated": self.updated,
            "last_used": self.last_used,
            "use_count": self.use_count,
        }


def as_model_text(text: str) -> str:
    """A memory's text as the model reads it back: ``&``, ``<`` and ``>`` escaped, so a saved
    text cannot close ``<memories>`` or open markup of ours (``<environment_context>``, a user
    message) in another session, and continuation lines indented inside their entry."""
    escaped = text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
    return escaped.replace("\n", "\n  ")


def format_ref(scope: str, number: int) -> str:
    return f"{PREFIX[scope]}{number}"


def parse_ref(ref: str) -> tuple[str, int]:
    """``p12`` -> ("project", 12). Raises MemoryError for anything else."""
    match = _ID.match(ref.strip().lower())
    if match is None:
        raise MemoryError(f"{ref!r} is not a memory id; ids look like u3 (user), p12 (project) or s1 (session)")
    scope = next(name for name, letter in PREFIX.items() if letter == match[1])
    return scope, int(match[2])


def check_scope(scope: str) -> str:
    if scope not in SCOPES:
        raise MemoryError(f"unknown memory scope {scope!r}; expected one of: {', '.join(SCOPES)}")
    return scope


def now_iso() -> str:
    return datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
