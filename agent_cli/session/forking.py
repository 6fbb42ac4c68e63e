"""Forks: a new session file holding a copy of a conversation (or its beginning); the original
file is only read. The TUI's /fork and `agent exec resume --fork` then resume the copy."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_cli.items import Item
from agent_cli.session.session import Session, new_session_id
from agent_cli.store.rollout import RolloutError, RolloutWriter, load_session_file


def write_fork(
    agent_home: Path, cwd: str, model: str, provider: str, items: list[Item], learned: tuple[dict[str, Any], ...] = ()
) -> Path:
    writer = RolloutWriter.for_new_session(agent_home, new_session_id(), Path(cwd), model, provider)
    for record in learned:  # what was learned about the server holds for the copy too
        writer.append_learned_like(record)
    for item in items:
        writer.append_item(item)
    if not writer.exists:
        raise RolloutError("nothing to fork: there is no prompt before that point")
    writer.close()
    return writer.path


def fork_session(session: Session, length: int | None = None) -> Path:
    """The session's conversation (its first ``length`` items) as a new session file."""
    session.rollout.sync()
    items = session.history.items[:length] if length is not None else session.history.items
    header = session.rollout.header
    return write_fork(session.config.agent_home, header.cwd, session.model, header.provider, items)


def fork_file(agent_home: Path, path: Path) -> Path:
    """A copy of the saved session ``path`` (its current branch) as a new session file."""
    loaded = load_session_file(path)
    header = loaded.header
    return write_fork(agent_home, header.cwd, header.model, header.provider, list(loaded.items), loaded.learned)
