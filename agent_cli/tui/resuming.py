"""What ``/resume`` needs besides the app itself: listing, finding and restoring saved sessions.

Everything here is synchronous file work, run off the UI thread by the app; errors come back as
text for a notice.
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.commands.worktree_commands import config_in
from agent_cli.config import Config
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.resume import restore
from agent_cli.store.catalog import SessionSummary, find_session, list_sessions
from agent_cli.store.rollout import RolloutError, read_header
from agent_cli.worktrees.entering import GitError, return_to

PICKER_SIZE = 30


def saved_sessions(agent_home: Path, current: Path) -> list[SessionSummary]:
    """Recent saved sessions, without the one this app is writing."""
    return [s for s in list_sessions(agent_home, limit=PICKER_SIZE + 1) if s.path != current][:PICKER_SIZE]


def find_saved(agent_home: Path, ref: str, current: Path) -> Path:
    """The session file ``ref`` names; raises RolloutError (a message for the user)."""
    path = find_session(agent_home, ref)
    if path == current:
        raise RolloutError(f"{ref!r} is the session you are in")
    return path


def restored_session(config: Config, path: Path) -> Session:
    """The app's default way to reopen a session file (tests may pass another). A session that ran
    in a worktree goes on there (made again if it was removed); the app follows its folder."""
    try:
        header = read_header(path)
        entered = return_to(header.worktree, header.cwd)
    except (GitError, ValueError):
        entered = None  # it goes on here; restore() says what is wrong with a bad file
    if entered is not None and entered.cwd != config.cwd:
        config = config_in(config, entered.cwd)
    return restore(open_session(config, interactive=True), path)


def failure_text(exc: Exception) -> str:
    """Why a session could not be resumed, for an error notice."""
    # RolloutError and its kinds (newer format, busy, corrupt) already speak to the user.
    return str(exc) if isinstance(exc, RolloutError) else f"{type(exc).__name__}: {exc}"


def model_note(session: Session, path: Path, config: Config) -> str | None:
    """A hint when the session was recorded with another model or provider than the app uses."""
    try:
        header = read_header(path)
    except RolloutError:
        return None
    if header.model == session.model and header.provider == config.provider.id:
        return None
    switch = f" (/model {header.model} to switch)" if header.provider == config.provider.id else ""
    now = f"{session.model} via {config.provider.id}"
    return f"recorded with {header.model} via {header.provider}; continuing with {now}{switch}"
