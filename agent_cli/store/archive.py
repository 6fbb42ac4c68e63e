"""Archived sessions (Codex's ``thread/archive``): the file moves, with its subagents'
transcripts, from ``$AGENT_HOME/sessions`` to ``$AGENT_HOME/archived_sessions`` under the same
relative path, so lists and ``agent resume`` no longer see it; unarchiving moves it back."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from agent_cli.store.catalog import SessionSummary, raw_header, summarize
from agent_cli.store.names import session_names
from agent_cli.store.rollout import RolloutError, lock_file, sessions_root
from agent_cli.store.thread_ids import session_uuid


def archived_root(agent_home: Path) -> Path:
    return agent_home / "archived_sessions"


def archive_session(agent_home: Path, path: Path) -> Path:
    """Move the session file ``path``; refused while an agent holds it (SessionBusyError)."""
    return _move(path, sessions_root(agent_home), archived_root(agent_home))


def unarchive_session(agent_home: Path, session_id: str) -> Path:
    """Move back the archived session ``session_id`` (its id or its UUID)."""
    for path in _files(archived_root(agent_home)):
        header = raw_header(path)
        if header is not None and session_id in (header["id"], session_uuid(header["id"])):
            return _move(path, archived_root(agent_home), sessions_root(agent_home))
    raise RolloutError(f"no archived session {session_id!r}")


def list_archived(agent_home: Path) -> list[SessionSummary]:
    names = session_names(agent_home)
    found = []
    for path in _files(archived_root(agent_home)):
        info = path.stat()
        if (summary := summarize(path, info.st_mtime, info.st_size, names)) is not None:
            found.append(summary)
    return sorted(found, key=lambda summary: summary.updated, reverse=True)


def _files(root: Path) -> list[Path]:
    if not root.is_dir():
        return []
    return [path for path in root.rglob("*.jsonl") if not any(p.endswith(".agents") for p in path.parts)]


def _move(path: Path, source_root: Path, target_root: Path) -> Path:
    try:
        relative = path.resolve().relative_to(source_root.resolve())
    except ValueError:
        relative = Path(path.name)
    target = target_root / relative
    target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    with lock_file(path):  # not while a running agent writes it
        os.replace(path, target)
    transcripts = path.with_suffix(".agents")
    if transcripts.is_dir():
        shutil.move(str(transcripts), str(target.with_suffix(".agents")))
    return target
