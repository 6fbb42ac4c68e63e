"""Every memory scope one session uses, opened on first use.

- ``user``: ``$AGENT_HOME/memory/user.db``, for every project;
- ``project``: ``$AGENT_HOME/memory/projects/<hash of the git root or cwd>.db`` (the root path is
  recorded inside);
- ``session``: in memory, written beside the session file (``<session>.memories.json``) whenever it
  changes, so resuming the session restores it.

A damaged database is moved aside and replaced by an empty one; the warning waits in
:meth:`MemoryBook.take_warnings` for the front end, and the session goes on.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

from agent_cli.context.project_doc import find_git_root
from agent_cli.memory.model import SCOPES, SOURCES, Memory, MemoryError, check_scope, parse_ref
from agent_cli.memory.ranking import DEFAULT_MIN_SCORE, Scored, rank, select
from agent_cli.memory.store import CorruptDatabase, MemoryStore
from agent_cli.memory.terms import query_words, stop_stems
from agent_cli.paths import open_private

T = TypeVar("T")
CANDIDATES_PER_SCOPE = 20  # BM25's best per scope, re-ranked by the formula
DEFAULT_CONFIDENCE = {"user": 1.0, "import": 1.0, "model": 0.8}


def memory_dir(agent_home: Path) -> Path:
    return Path(agent_home) / "memory"


def project_root(cwd: Path) -> Path:
    cwd = Path(cwd).resolve()
    return find_git_root(cwd) or cwd


def project_db_path(agent_home: Path, cwd: Path) -> Path:
    digest = hashlib.sha256(str(project_root(cwd)).encode()).hexdigest()[:16]
    return memory_dir(agent_home) / "projects" / f"{digest}.db"


def session_memory_path(session_file: Path) -> Path:
    """The session scope's file beside a session file (not ``*.jsonl``: the session list skips it)."""
    return session_file.with_suffix(".memories.json")


@dataclass(frozen=True, slots=True)
class Saved:
    memory: Memory
    updated: bool  # a near duplicate was updated instead of adding a memory


class MemoryBook:
    def __init__(self, agent_home: Path, cwd: Path, session_file: Callable[[], Path | None] = lambda: None):
        self.agent_home = Path(agent_home)
        self.cwd = Path(cwd)
        self._session_file = session_file
        self._stores: dict[str, MemoryStore] = {}
        self._opening = threading.Lock()  # the TUI opens the stores in a worker thread (warm)
        self._closed = False
        self._warnings: list[str] = []
        self.injected: set[str] | None = None  # refs already in the current context (session/memory_recall.py)
        self.last_query: str | None = None  # what the latest turn recalled with; compaction recalls with it again

    # --- scopes ---------------------------------------------------------------------------

    def path(self, scope: str) -> Path | None:
        if scope == "user":
            return memory_dir(self.agent_home) / "user.db"
        if scope == "project":
            return project_db_path(self.agent_home, self.cwd)
        file = self._session_file()
        return session_memory_path(file) if file is not None else None

    def warm(self) -> None:
        """Open the databases and the tokenizer now (off the first turn's path)."""
        for scope in SCOPES:
            with self._opening:
                if self._closed:  # the session ended before its warm-up got here
                    return
            self.store(scope)

        stop_stems()

    def store(self, scope: str) -> MemoryStore:
        check_scope(scope)
        with self._opening:
            return self._stores.get(scope) or self._open(scope)

    def _open(self, scope: str) -> MemoryStore:
        if scope == "session":
            store = MemoryStore("session", None)
            self._load_session(store)
        else:
            root = str(project_root(self.cwd)) if scope == "project" else None
            store = MemoryStore(scope, self.path(scope), root)
        if store.warning:
            self._warnings.append(store.warning)
        self._stores[scope] = store
        return store

    def _call(self, scope: str, action: Callable[[MemoryStore], T]) -> T:
        """Run ``action`` on a scope's store; a damaged database is moved aside and tried again."""
        store = self.store(scope)
        try:
            return action(store)
        except CorruptDatabase as exc:
            store.recover(exc)
            self._warnings.append(store.warning or str(exc))
            return action(store)

    def take_warnings(self) -> list[str]:
        warnings, self._warnings = self._warnings, []
        return warnings

    def close(self) -> None:
        with self._opening:  # the TUI's warm-up thread may be opening a store right now
            stores, self._stores = list(self._stores.values()), {}
            self._closed = True
        for store in stores:
            store.close()

    # --- writing --------------------------------------------------------------------------

    def save(
        self,
        text: str,
        scope: str = "project",
        *,
        tags: Sequence[str] = (),
        confidence: float | None = None,
        source: str = "user",
        created: str | None = None,
    ) -> Saved:
        """Save through the gate (MemoryError says why not); a near duplicate is updated instead."""
        check_scope(scope)
        if source not in SOURCES:
            raise MemoryError(f"unknown memory source {source!r}")
        confidence = DEFAULT_CONFIDENCE[source] if confidence is None else float(confidence)
        if not 0.0 <= confidence <= 1.0:
            raise MemoryError(f"confidence must be between 0 and 1, got {confidence}")
        memory, updated = self._call(
            scope, lambda store: store.add(text, tags=tags, confidence=confidence, source=source, created=created)
        )
        self._session_changed(scope)
        return Saved(memory, updated)

    def forget(self, ref: str) -> Memory:
        scope, number = parse_ref(ref)
        memory = self._read(scope, lambda store: store.forget(number), None)
        if memory is None:
            raise MemoryError(f"no memory {ref} (listing the memories shows their ids)")
        self._session_changed(scope)
        return memory

    def edit(self, ref: str, text: str) -> Memory:
        scope, number = parse_ref(ref)
        memory = self._call(scope, lambda store: store.edit(number, text))
        self._session_changed(scope)
        return memory

    # --- reading --------------------------------------------------------------------------

    def _read(self, scope: str, action: Callable[[MemoryStore], T], nothing: T) -> T:
        """A read of a scope that has no database yet gives ``nothing`` and creates no file
        (``agent memory list`` in a new project leaves no trace)."""
        return self._call(scope, action) if self._may_hold(scope) else nothing

    def get(self, ref: str) -> Memory:
        scope, number = parse_ref(ref)
        memory = self._read(scope, lambda store: store.get(number), None)
        if memory is None:
            raise MemoryError(f"no memory {ref} (listing the memories shows their ids)")
        return memory

    def newest(self, scopes: Iterable[str] = SCOPES, limit: int | None = None) -> dict[str, list[Memory]]:
        return {scope: self._read(scope, lambda store: store.newest(limit), []) for scope in scopes}

    def counts(self) -> dict[str, int]:
        return {scope: self._read(scope, lambda store: store.count(), 0) for scope in SCOPES}

    def search(self, query: str, scopes: Iterable[str] = SCOPES, limit: int = 10) -> list[Scored]:
        """Memories sharing words with ``query``, ranked, without a minimum score."""
        words, stems = query_words(query)
        found = max(limit, CANDIDATES_PER_SCOPE)
        candidates = [m for scope in scopes for m in self._read(scope, lambda s: s.search(words, found), [])]
        return [scored for scored in rank(stems, candidates) if scored.similarity > 0][:limit]

    def recall(
        self,
        message: str,
        *,
        top_k: int = 5,
        max_chars: int = 2_000,
        min_score: float = DEFAULT_MIN_SCORE,
        exclude: Iterable[str] = (),
    ) -> list[Scored]:
        """The memories worth putting beside ``message``; their use is recorded."""
        scopes = [scope for scope in SCOPES if self._may_hold(scope)]
        if not scopes:
            return []

        skip = set(exclude)
        words, stems = query_words(message)
        if not words:
            return []
        candidates = [
            memory
            for scope in scopes
            for memory in self._call(scope, lambda store: store.search(words, CANDIDATES_PER_SCOPE))
            if memory.ref not in skip
        ]
        chosen = select(rank(stems, candidates), top_k=top_k, max_chars=max_chars, min_score=min_score)
        for scope in SCOPES:
            ids = [item.memory.id for item in chosen if item.memory.scope == scope]
            if ids:
                self._call(scope, lambda store: store.touch(ids))
        return chosen

    def _may_hold(self, scope: str) -> bool:
        """False when ``scope`` has nothing to recall: its store is not open and it has no file
        yet. Recall then creates no empty database (a session's first request waits for it)."""
        if scope in self._stores:
            return True
        path = self.path(scope)
        return path is not None and path.exists()

    # --- the session scope's file ---------------------------------------------------------

    def _load_session(self, store: MemoryStore) -> None:
        path = self.path("session")
        if path is None or not path.is_file():
            return
        try:
            records = json.loads(path.read_text(encoding="utf-8"))
            for record in records:
                store.restore(record)
        except (OSError, ValueError, TypeError, KeyError, MemoryError) as exc:
            self._warnings.append(f"could not restore this session's memories from {path}: {exc}")

    def _session_changed(self, scope: str) -> None:
        if scope != "session" or (path := self.path("session")) is None:
            return
        records = [memory.to_dict() for memory in self.store("session").newest()]
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            partial = path.with_name(path.name + ".partial")
            with open_private(partial, "w") as out:  # owner-only, as the session file beside it
                out.write(json.dumps(records, ensure_ascii=False, indent=1))
            os.replace(partial, path)
        except OSError as exc:
            self._warnings.append(f"could not save this session's memories to {path}: {exc.strerror}")
