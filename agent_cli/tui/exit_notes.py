"""What is printed once the app has left: the way back into the conversation (`agent resume ID`),
or, for a session that goes on in a host, `agent attach ID`."""

from __future__ import annotations

from agent_cli.session import Session
from agent_cli.tui.hosted import Hosted, detached_note


def exit_note(remote: Hosted | None, detached: str | None, session: Session | None) -> str | None:
    if remote is not None:
        return detached_note(remote)
    if detached is not None:  # /detach moved the session to the host
        return detached
    return resume_note(session) if session is not None else None


def resume_note(session: Session) -> str | None:
    """The session id and how to continue it; None when nothing was saved."""
    rollout = session.rollout
    if not rollout.path.exists():
        return None
    session_id = rollout.header.id
    return f"session {session_id}\ncontinue it with: agent resume {session_id}   (headless: agent exec resume {session_id} PROMPT)"
