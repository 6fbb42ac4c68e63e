"""A session's id as a UUID: how clients of Codex's protocol (its TUI parses thread ids as UUIDs)
name our sessions. Derived, not stored: the same session always has the same UUID, and
``find_session`` takes either name."""

from __future__ import annotations

import uuid

NAMESPACE = uuid.UUID("6f1c1f52-3a4e-4b7e-9a51-2d7c9b0e4a11")  # agent-cli's sessions


def session_uuid(session_id: str) -> str:
    return str(uuid.uuid5(NAMESPACE, session_id))


def looks_like_uuid(text: str) -> bool:
    try:
        uuid.UUID(text)
    except ValueError:
        return False
    return len(text) == 36
