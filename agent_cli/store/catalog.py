"""Find and list saved sessions: ``agent sessions``, ``agent resume --last`` and ``resume ID``.

Listing reads only each file's header and its first few lines (to find the first prompt), so it
stays fast with many large sessions. Files it cannot read are skipped, never fatal.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_cli.context.fragments import is_real_user_message
from agent_cli.items import Message
from agent_cli.store.names import session_names
from agent_cli.store.rollout import HEADER_TYPE, RolloutError, sessions_root
from agent_cli.store.thread_ids import looks_like_uuid, session_uuid

FIRST_PROMPT_SCAN_BYTES = 256 * 1024  # the first prompt follows the initial context, near the top


@dataclass(frozen=True)
class SessionSummary:
    path: Path
    id: str
    cwd: str
    created: str
    model: str
    format_version: int
    updated: float  # the file's mtime: when the session last recorded something
    size: int  # bytes
    first_prompt: str | None
    worktree: dict[str, str] | None = None  # the agent's worktree it ran in (worktrees/)
    name: str | None = None  # /rename, agent sessions rename
    provider: str = ""  # the model provider's id

    @property
    def short_id(self) -> str:
        """The random part of the id, enough to name a session on the command line."""
        return self.id.rsplit("-", 1)[-1]


def session_files(agent_home: Path) -> list[tuple[Path, float, int]]:
    """Every session file with its mtime and size, most recently updated first."""
    root = sessions_root(agent_home)
    found: list[tuple[Path, float, int]] = []
    if not root.is_dir():
        return found
    for path in root.rglob("*.jsonl"):
        if any(part.endswith(".agents") for part in path.relative_to(root).parts[:-1]):
            continue  # a subagent's transcript, reached through its parent's session
        try:
            stat = path.stat()
        except OSError:
            continue
        found.append((path, stat.st_mtime, stat.st_size))
    found.sort(key=lambda entry: (entry[1], str(entry[0])), reverse=True)
    return found


def raw_header(path: Path) -> dict[str, Any] | None:
    """The header line as a dict, without version checks (those happen on load)."""
    try:
        with path.open("rb") as handle:
            record = json.loads(handle.readline(1 << 20).decode("utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError):
        return None
    if not isinstance(record, dict) or record.get("type") != HEADER_TYPE or not isinstance(record.get("id"), str):
        return None
    return record


def first_prompt(path: Path) -> str | None:
    """The first message as the user typed it (not a context fragment), if near the top of the file."""
    try:
        with path.open("rb") as handle:
            chunk = handle.read(FIRST_PROMPT_SCAN_BYTES)
    except OSError:
        return None
    for raw in chunk.split(b"\n")[1:]:
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue  # the cut at the end of the chunk, or a torn line
        item = record.get("item") if isinstance(record, dict) and record.get("type") == "item" else None
        if isinstance(item, dict) and item.get("type") == "message" and item.get("role") == "user":
            if isinstance(typed := item.get("typed"), str):  # `/review …`, not the rubric it expanded to
                return typed
            message = Message("user", str(item.get("text", "")))
            if is_real_user_message(message):
                return message.text
    return None


def summarize(path: Path, mtime: float, size: int, names: dict[str, str] | None = None) -> SessionSummary | None:
    header = raw_header(path)
    if header is None:
        return None
    version = header.get("format_version")
    worktree = header.get("worktree")
    return SessionSummary(
        path=path,
        id=header["id"],
        cwd=str(header.get("cwd", "")),
        created=str(header.get("created", "")),
        model=str(header.get("model", "")),
        format_version=version if isinstance(version, int) else 0,
        updated=mtime,
        size=size,
        first_prompt=first_prompt(path),
        worktree={str(k): str(v) for k, v in worktree.items()} if isinstance(worktree, dict) else None,
        name=(names or {}).get(header["id"]),
        provider=str(header.get("provider", "")),
    )


def list_sessions(agent_home: Path, *, cwd: Path | str | None = None, limit: int | None = None) -> list[SessionSummary]:
    """Saved sessions, most recently updated first; only those started in ``cwd`` if given."""
    wanted = str(cwd) if cwd is not None else None
    result: list[SessionSummary] = []
    names = session_names(agent_home)
    for path, mtime, size in session_files(agent_home):
        if wanted is not None:
            header = raw_header(path)
            if header is None or header.get("cwd") != wanted:
                continue
        summary = summarize(path, mtime, size, names)
        if summary is None:
            continue
        result.append(summary)
        if limit is not None and len(result) >= limit:
            break
    return result


def latest_session(agent_home: Path, cwd: Path | str) -> tuple[Path, bool] | None:
    """The most recent session started in ``cwd``, else the most recent overall.

    Returns the path and whether it belongs to ``cwd``; None when there is no session at all.
    """
    files = session_files(agent_home)
    wanted = str(cwd)
    overall: Path | None = None
    for path, _, _ in files:
        header = raw_header(path)
        if header is None:
            continue
        if header.get("cwd") == wanted:
            return path, True
        overall = overall or path
    return (overall, False) if overall is not None else None


def find_session(agent_home: Path, ref: str) -> Path:
    """A session named by a file path, its full id, its UUID (store/thread_ids.py: how Codex's
    clients name it), its name (/rename), or a prefix of its id or of its random part."""
    ref = ref.strip()
    if not ref:
        raise RolloutError("no session id given")
    candidate = Path(ref).expanduser()
    if ref.endswith(".jsonl") and candidate.is_file():
        return candidate
    named = {session_id for session_id, name in session_names(agent_home).items() if name == ref}
    by_uuid = looks_like_uuid(ref)
    matches: list[tuple[Path, str]] = []
    for path, _, _ in session_files(agent_home):
        header = raw_header(path)
        session_id = header["id"] if header else path.stem
        short = session_id.rsplit("-", 1)[-1]
        if session_id == ref or (session_id in named and len(named) == 1):
            return path
        if by_uuid and session_uuid(session_id) == ref.lower():
            return path
        if session_id.startswith(ref) or short.startswith(ref) or path.stem.startswith(ref):
            matches.append((path, session_id))
    if not matches:
        raise RolloutError(f"no saved session matches {ref!r} (see `agent sessions`)")
    if len(matches) > 1:
        shown = ", ".join(session_id for _, session_id in matches[:5])
        more = f" and {len(matches) - 5} more" if len(matches) > 5 else ""
        raise RolloutError(f"{ref!r} matches {len(matches)} sessions ({shown}{more}); give more of the id")
    return matches[0][0]
