"""One scope's memories: a SQLite database with an FTS5 index (porter stemming), in WAL mode.

Safe with several agents writing at once: WAL lets readers and one writer work together, a busy
timeout waits for the writer, and the duplicate check runs in the same ``BEGIN IMMEDIATE``
transaction as the write it decides. ``term_docs`` counts the memories holding each stem, so a
search can leave out words too common to be worth ranking (``terms.match_expression``). A database that turns out to be corrupt is moved aside
(``<name>.corrupt-<time>``) and started afresh; :attr:`MemoryStore.warning` says so.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_cli.memory.gate import check_text
from agent_cli.memory.model import Memory, MemoryError, now_iso, parse_ref
from agent_cli.memory.terms import TOKENIZER, match_expression, query_words, text_terms, texts_terms

if TYPE_CHECKING:  # imported where it is used: a session that never opens memory never loads sqlite3
    import sqlite3

SCHEMA_VERSION = 1
DUPLICATE_OVERLAP = 0.7  # Jaccard overlap of the stems above which a new memory updates an old one
# Matches a search may rank with BM25 (about 5 µs each): what keeps recall fast at 100,000 memories.
POSTINGS_BUDGET = 1_000
BUSY_TIMEOUT_S = 5.0
_CORRUPT_CODES = {11, 26}  # SQLITE_CORRUPT, SQLITE_NOTADB
_COLUMNS = "id, text, tags, confidence, source, created, updated, last_used, use_count, terms"
SCHEMA = f"""
CREATE TABLE IF NOT EXISTS memories(
    id INTEGER PRIMARY KEY AUTOINCREMENT, text TEXT NOT NULL, tags TEXT NOT NULL DEFAULT '[]',
    confidence REAL NOT NULL, source TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL,
    last_used TEXT, use_count INTEGER NOT NULL DEFAULT 0, terms TEXT NOT NULL DEFAULT '');
CREATE VIRTUAL TABLE IF NOT EXISTS memories_fts USING fts5(
    text, tags, content='memories', content_rowid='id', tokenize='{TOKENIZER}');
CREATE TRIGGER IF NOT EXISTS memories_ai AFTER INSERT ON memories BEGIN
    INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags); END;
CREATE TRIGGER IF NOT EXISTS memories_ad AFTER DELETE ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags); END;
CREATE TRIGGER IF NOT EXISTS memories_au AFTER UPDATE OF text, tags ON memories BEGIN
    INSERT INTO memories_fts(memories_fts, rowid, text, tags) VALUES ('delete', old.id, old.text, old.tags);
    INSERT INTO memories_fts(rowid, text, tags) VALUES (new.id, new.text, new.tags); END;
CREATE TABLE IF NOT EXISTS term_docs(term TEXT PRIMARY KEY, docs INTEGER NOT NULL) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
PRAGMA user_version = {SCHEMA_VERSION};
"""


class CorruptDatabase(MemoryError):
    """The database file is damaged (SQLite said so)."""


def count_terms(db: sqlite3.Connection, terms: Iterable[str], delta: int) -> None:
    """Add ``delta`` to the number of memories holding each of ``terms``."""
    db.executemany(
        "INSERT INTO term_docs(term, docs) VALUES (?, ?) ON CONFLICT(term) DO UPDATE SET docs = docs + excluded.docs",
        [(term, delta) for term in terms],
    )


def is_corruption(exc: sqlite3.Error) -> bool:
    return getattr(exc, "sqlite_errorcode", None) in _CORRUPT_CODES


def make_private(path: Path) -> None:
    """The database file owner-only (0600) and its folders up to ``memory/`` 0700, created so or
    tightened when an older version left them open: memories are about the user and their work.
    SQLite gives its ``-wal`` and ``-shm`` files the database file's mode."""
    folders = [path.parent] if path.parent.name != "projects" else [path.parent.parent, path.parent]
    for folder in folders:
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        if folder.stat().st_mode & 0o077:
            folder.chmod(0o700)
    os.close(os.open(path, os.O_RDWR | os.O_CREAT, 0o600))
    for suffix in ("", "-wal", "-shm"):
        file = Path(str(path) + suffix)
        if file.exists() and file.stat().st_mode & 0o077:
            file.chmod(0o600)


class MemoryStore:
    """The memories of one scope. ``path`` None keeps them in memory (the session scope)."""

    def __init__(self, scope: str, path: Path | None, root: str | None = None):
        import sqlite3  # on first use (memory/__init__.py)

        self.scope = scope
        self.path = path
        self.root = root  # the project directory a project database belongs to
        self.warning: str | None = None  # set when a corrupt database was moved aside
        self._lock = threading.RLock()
        try:
            self._db = self._connect()
        except sqlite3.DatabaseError as exc:
            if path is None or not (is_corruption(exc) or isinstance(exc, CorruptDatabase)):
                raise MemoryError(f"cannot open the {scope} memory database {path}: {exc}") from None
            self._db = self.recover(exc)

    # --- opening --------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        """Open (creating if need be); two processes creating the same database at once can meet
        SQLite's "database is locked" on the switch to WAL, which skips the busy handler: retried."""
        import sqlite3  # on first use (memory/__init__.py)

        deadline = time.monotonic() + BUSY_TIMEOUT_S
        while True:
            try:
                return self._connect_once()
            except sqlite3.OperationalError as exc:
                if "locked" not in str(exc) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def _connect_once(self) -> sqlite3.Connection:
        import sqlite3  # on first use (memory/__init__.py)

        if self.path is not None:
            make_private(self.path)
        target = str(self.path) if self.path is not None else ":memory:"
        db = sqlite3.connect(target, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
        try:
            if self.path is not None:
                db.execute("PRAGMA journal_mode=WAL")
                db.execute("PRAGMA synchronous=NORMAL")  # durable at checkpoints; never corrupt
            if db.execute("PRAGMA user_version").fetchone()[0] != SCHEMA_VERSION:
                db.executescript(f"BEGIN IMMEDIATE; {SCHEMA} COMMIT;")  # one creator at a time
            if self.root is not None:
                db.execute("INSERT OR IGNORE INTO meta(key, value) VALUES ('root', ?)", (self.root,))
        except BaseException:
            db.close()
            raise
        return db

    def recover(self, exc: Exception) -> sqlite3.Connection:
        """Move the damaged file (and its WAL) aside and start an empty database."""
        with self._lock:
            if getattr(self, "_db", None) is not None:
                self._db.close()
            assert self.path is not None
            aside = self.path.with_name(f"{self.path.name}.corrupt-{datetime.now():%Y%m%dT%H%M%S}")
            for suffix in ("", "-wal", "-shm"):
                source = Path(str(self.path) + suffix)
                if source.exists():
                    source.replace(Path(str(aside) + suffix))
            self.warning = (
                f"The {self.scope} memory database {self.path} was damaged ({exc}); it was moved to "
                f"{aside.name} and a new, empty one started."
            )
            self._db = self._connect()
            return self._db

    def close(self) -> None:
        with self._lock:
            self._db.close()

    @contextmanager
    def _transaction(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")  # take the write lock before reading what we decide on
            try:
                yield self._db
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")

    # --- writing --------------------------------------------------------------------------

    def add(
        self,
        text: str,
        *,
        tags: Sequence[str] = (),
        confidence: float = 1.0,
        source: str = "user",
        created: str | None = None,
    ) -> tuple[Memory, bool]:
        """Save a memory through the gate. Returns it and True when it updated a near duplicate."""
        text = check_text(text)
        tags = tuple(dict.fromkeys(tag.strip() for tag in tags if tag.strip()))
        terms = text_terms(" ".join((text, *tags)))
        stamp = now_iso()
        with self._guard(), self._transaction() as db:
            duplicate = self._near_duplicate(text)
            if duplicate is not None:
                merged = tuple(dict.fromkeys((*duplicate.tags, *tags)))
                terms = text_terms(" ".join((text, *merged)))
                db.execute(
                    "UPDATE memories SET text = ?, tags = ?, confidence = ?, source = ?, updated = ?, terms = ? WHERE id = ?",
                    (
                        text,
                        json.dumps(merged),
                        max(confidence, duplicate.confidence),
                        source,
                        stamp,
                        " ".join(sorted(terms)),
                        duplicate.id,
                    ),
                )
                count_terms(db, duplicate.terms, -1)
                row_id = duplicate.id
            else:
                cursor = db.execute(
                    "INSERT INTO memories(text, tags, confidence, source, created, updated, terms) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (text, json.dumps(tags), confidence, source, created or stamp, stamp, " ".join(sorted(terms))),
                )
                row_id = int(cursor.lastrowid or 0)
            count_terms(db, terms, 1)
            saved = self._get(row_id)
        assert saved is not None
        return saved, duplicate is not None

    def restore(self, record: Mapping[str, Any]) -> None:
        """Put back a memory exactly as it was saved, id included (the session scope's file)."""
        text = check_text(record["text"])
        tags = tuple(str(tag) for tag in record.get("tags") or ())
        terms = text_terms(" ".join((text, *tags)))
        with self._guard(), self._transaction() as db:
            db.execute(
                f"INSERT INTO memories({_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    parse_ref(str(record["id"]))[1],
                    text,
                    json.dumps(tags),
                    float(record.get("confidence", 1.0)),
                    str(record.get("source", "user")),
                    str(record.get("created") or now_iso()),
                    str(record.get("updated") or now_iso()),
                    record.get("last_used"),
                    int(record.get("use_count") or 0),
                    " ".join(sorted(terms)),
                ),
            )
            count_terms(db, terms, 1)

    def _near_duplicate(self, text: str) -> Memory | None:
        """The memory whose text shares most of its words with ``text`` (tags aside), if any."""
        candidates = self._search(query_words(text)[0], limit=20)
        terms, *others = texts_terms([text, *(memory.text for memory in candidates)])
        for memory, other in zip(candidates, others):
            union = terms | other
            if memory.text.casefold() == text.casefold() or (
                union and len(terms & other) / len(union) >= DUPLICATE_OVERLAP
            ):
                return memory
        return None

    def edit(self, memory_id: int, text: str) -> Memory:
        text = check_text(text)
        with self._guard(), self._transaction() as db:
            memory = self._get(memory_id)
            if memory is None:
                raise MemoryError(f"no memory {memory_id} in the {self.scope} scope")
            terms = text_terms(" ".join((text, *memory.tags)))
            db.execute(
                "UPDATE memories SET text = ?, updated = ?, terms = ? WHERE id = ?",
                (text, now_iso(), " ".join(sorted(terms)), memory_id),
            )
            count_terms(db, memory.terms, -1)
            count_terms(db, terms, 1)
            edited = self._get(memory_id)
        assert edited is not None
        return edited

    def forget(self, memory_id: int) -> Memory | None:
        with self._guard(), self._transaction() as db:
            memory = self._get(memory_id)
            if memory is not None:
                db.execute("DELETE FROM memories WHERE id = ?", (memory_id,))
                count_terms(db, memory.terms, -1)
        return memory

    def touch(self, ids: Iterable[int]) -> None:
        """Record that these memories were recalled (best effort: a busy database skips it)."""
        import sqlite3  # on first use (memory/__init__.py)

        ids = list(ids)
        if not ids:
            return
        try:
            with self._guard(), self._transaction() as db:
                db.executemany(
                    "UPDATE memories SET last_used = ?, use_count = use_count + 1 WHERE id = ?",
                    [(now_iso(), memory_id) for memory_id in ids],
                )
        except sqlite3.OperationalError:
            pass

    # --- reading --------------------------------------------------------------------------

    def get(self, memory_id: int) -> Memory | None:
        with self._guard(), self._lock:
            return self._get(memory_id)

    def newest(self, limit: int | None = None) -> list[Memory]:
        with self._guard(), self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM memories ORDER BY updated DESC, id DESC LIMIT ?", (limit if limit else -1,)
            )
            return [self._memory(row) for row in rows]

    def count(self) -> int:
        with self._guard(), self._lock:
            return int(self._db.execute("SELECT count(*) FROM memories").fetchone()[0])

    def search(self, words: Sequence[tuple[str, str]], limit: int = 20) -> list[Memory]:
        """Memories matching ``words`` ((word, stem) pairs from ``terms.query_words``), best BM25 first."""
        with self._guard(), self._lock:
            return self._search(words, limit)

    def _search(self, words: Sequence[tuple[str, str]], limit: int) -> list[Memory]:
        if not words:
            return []
        stems = sorted({stem for _, stem in words})
        counts = dict(
            self._db.execute(f"SELECT term, docs FROM term_docs WHERE term IN ({', '.join('?' * len(stems))})", stems)
        )
        expression = match_expression([w for w, _ in words], {w: counts.get(s, 0) for w, s in words}, POSTINGS_BUDGET)
        if expression is None:
            return []
        rows = self._db.execute(
            f"SELECT {', '.join('m.' + c for c in _COLUMNS.split(', '))} FROM memories_fts "
            "JOIN memories m ON m.id = memories_fts.rowid WHERE memories_fts MATCH ? ORDER BY rank LIMIT ?",
            (expression, limit),
        )
        return [self._memory(row) for row in rows]

    def _get(self, memory_id: int) -> Memory | None:
        row = self._db.execute(f"SELECT {_COLUMNS} FROM memories WHERE id = ?", (memory_id,)).fetchone()
        return self._memory(row) if row else None

    def _memory(self, row: tuple) -> Memory:
        memory_id, text, tags, confidence, source, created, updated, last_used, use_count, terms = row
        return Memory(
            memory_id,
            self.scope,
            text,
            tuple(json.loads(tags or "[]")),
            float(confidence),
            source,
            created,
            updated,
            last_used,
            int(use_count),
            frozenset(terms.split()),
        )

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """SQLite's corruption errors become CorruptDatabase (the caller moves the file aside)."""
        import sqlite3  # on first use (memory/__init__.py)

        try:
            yield
        except sqlite3.DatabaseError as exc:
            if is_corruption(exc):
                raise CorruptDatabase(str(exc)) from exc
            raise
