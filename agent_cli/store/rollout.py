"""Session files: every history change appended as a JSON line the moment it happens.

A file lives at ``$AGENT_HOME/sessions/YYYY/MM/DD/<HHMMSS>-<session id>.jsonl``. Line one is a
header (format version, id, cwd, model, provider, created time); each later line is one history
operation, replayed in order on load:

- ``{"type": "item", "item": {...}}`` — an item recorded (see :mod:`agent_cli.items`);
- ``{"type": "compaction", "items": [...]}`` — the history was replaced (compaction); what came
  before stays in the file;
- ``{"type": "remove_oldest"}`` — the oldest item (with its call/output partner) was evicted;
- ``{"type": "learned", "what": ..., ...}`` — something learned about the model server, not part
  of the history (session/learned.py): restored on resume, the last line of each kind wins.
  Agents older than this record skip such a line with a warning and resume as before.
- ``{"type": "checkpoint" | "checkpoint_after" | "checkpoint_undone", ...}`` — snapshots of the
  work tree (session/checkpointing.py): never part of the history, never sent to the model;
- ``{"type": "rewind", "length": N}`` — the conversation went back to its first N items (/rewind);
  the items after them stay in the file above this line, as the abandoned branch.

The file is created with the first prompt that is sent (the first item that is not harness
context): context recorded before it waits in memory, so a session whose only prompt a hook
blocked leaves no file. Each line is written with one ``write`` on an unbuffered file, so a crash
loses at most the line being written (a "torn" last line, skipped with a warning on load). The
file is fsynced at the end of every turn and held under an advisory lock so two processes never
append to one file.
"""

from __future__ import annotations

import contextlib
import json
import os
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

from agent_cli import __version__
from agent_cli.context.fragments import is_contextual_fragment
from agent_cli.context.history import History
from agent_cli.items import Item, Message, item_from_dict, item_to_dict

try:  # advisory locks are a POSIX nicety; elsewhere files are simply not locked
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

FORMAT_VERSION = 1
HEADER_TYPE = "session"
LEARNED_TYPE = "learned"
CHECKPOINT_TYPES = ("checkpoint", "checkpoint_after", "checkpoint_undone")
REWIND_TYPE = "rewind"
NETWORK_TYPE = "network"  # a decision of the network proxy (session/network_access.py): a record, not history


class RolloutError(Exception):
    """A session file that cannot be used. The message is meant for the user."""


class NewerFormatError(RolloutError):
    """The file was written by a newer agent-cli."""


class SessionBusyError(RolloutError):
    """Another agent process is appending to the file."""


def sessions_root(agent_home: Path) -> Path:
    return Path(agent_home) / "sessions"


def session_path(agent_home: Path, session_id: str, now: datetime | None = None) -> Path:
    now = now or datetime.now()
    return sessions_root(agent_home) / f"{now:%Y}" / f"{now:%m}" / f"{now:%d}" / f"{now:%H%M%S}-{session_id}.jsonl"


@dataclass(frozen=True, slots=True)
class SessionHeader:
    id: str
    cwd: str
    model: str
    provider: str
    created: str  # ISO 8601 with the local UTC offset
    format_version: int = FORMAT_VERSION
    agent_version: str = __version__
    worktree: dict[str, str] | None = None  # the agent's worktree it ran in (worktrees/): name, path, branch

    def to_dict(self) -> dict[str, Any]:
        worktree = {"worktree": self.worktree} if self.worktree else {}  # older readers ignore the key
        return {
            "type": HEADER_TYPE,
            "format_version": self.format_version,
            "id": self.id,
            "cwd": self.cwd,
            "model": self.model,
            "provider": self.provider,
            "created": self.created,
            "agent_version": self.agent_version,
            **worktree,
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> SessionHeader:
        if not isinstance(data, dict) or data.get("type") != HEADER_TYPE:
            raise RolloutError(f"{where}: not an agent session file (the first line is not a session header)")
        version = data.get("format_version")
        if not isinstance(version, int) or isinstance(version, bool):
            raise RolloutError(f"{where}: the session header has no valid format_version")
        if version > FORMAT_VERSION:
            raise NewerFormatError(
                f"{where} was written by a newer agent-cli (session format {version}; this version "
                f"reads format {FORMAT_VERSION} and older). Upgrade agent-cli to resume it."
            )
        fields = {}
        for name in ("id", "cwd", "model", "provider", "created"):
            value = data.get(name)
            if not isinstance(value, str):
                raise RolloutError(f"{where}: the session header has no valid {name!r}")
            fields[name] = value
        worktree = data.get("worktree")
        return cls(
            **fields,
            format_version=version,
            agent_version=str(data.get("agent_version", "")),
            worktree={str(k): str(v) for k, v in worktree.items()} if isinstance(worktree, dict) else None,
        )


def encode_line(record: dict[str, Any]) -> bytes:
    text = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: let json escape them so the line stays valid
        return (json.dumps(record, separators=(",", ":")) + "\n").encode("ascii")


# --- reading -------------------------------------------------------------------------------


@dataclass(frozen=True)
class LoadedSession:
    path: Path
    header: SessionHeader
    items: tuple[Item, ...]  # the history after replaying every line
    warnings: tuple[str, ...]
    good_length: int  # bytes up to the end of the last usable line
    needs_newline: bool  # the last usable line has no trailing newline
    compactions: int = 0  # compaction lines replayed: how often the conversation was compacted
    learned: tuple[dict[str, Any], ...] = ()  # "learned" lines, in file order
    checkpoints: tuple[dict[str, Any], ...] = ()  # checkpoint and rewind lines, in file order


def load_session_file(path: Path) -> LoadedSession:
    """Replay a session file. Raises :class:`RolloutError` with a clear message on bad files."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise RolloutError(f"session file {path} does not exist") from None
    except OSError as exc:
        raise RolloutError(f"cannot read session file {path}: {exc.strerror}") from None
    lines = data.split(b"\n")
    complete = lines[:-1]  # every chunk followed by a newline
    tail = lines[-1]  # bytes after the last newline: empty, or a line cut short
    history = History()
    warnings: list[str] = []
    header: SessionHeader | None = None
    good_length = 0
    offset = 0
    compactions = 0
    learned: list[dict[str, Any]] = []
    checkpoints: list[dict[str, Any]] = []
    chunks = [(line, True) for line in complete] + ([(tail, False)] if tail else [])
    for number, (raw, has_newline) in enumerate(chunks, start=1):
        line_end = offset + len(raw) + (1 if has_newline else 0)
        is_last = number == len(chunks)
        if not raw.strip():
            offset = line_end
            good_length = line_end
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            if is_last and header is not None:
                warnings.append(
                    f"skipped a torn last line ({len(raw)} bytes) in {path.name}: the agent probably "
                    f"stopped while writing it"
                )
                break
            if header is None and is_last and not has_newline:
                raise RolloutError(f"{path}: the session file is empty (its header was cut short)") from None
            if header is None:
                raise RolloutError(f"{path}: not an agent session file (line 1 is not JSON)") from None
            raise RolloutError(f"{path}: line {number} is corrupt (not valid JSON). {repair_hint(path)}") from None
        if header is None:
            header = SessionHeader.from_dict(record, str(path))
        elif isinstance(record, dict) and record.get("type") == LEARNED_TYPE:
            learned.append(record)
        elif isinstance(record, dict) and record.get("type") in CHECKPOINT_TYPES:
            checkpoints.append(record)
        elif isinstance(record, dict) and record.get("type") == NETWORK_TYPE:
            pass  # read by people and tools, not replayed
        else:
            if isinstance(record, dict) and record.get("type") == REWIND_TYPE:
                checkpoints.append(record)
            try:
                note = apply_record(history, record, f"{path}: line {number}")
            except RolloutError as exc:
                raise RolloutError(f"{exc}. {repair_hint(path)}") from None
            if note:
                warnings.append(note)
            if record.get("type") == "compaction":
                compactions += 1
        offset = line_end
        good_length = line_end
    if header is None:
        raise RolloutError(f"{path}: the session file is empty")
    needs_newline = good_length > 0 and not data[:good_length].endswith(b"\n")
    return LoadedSession(
        path,
        header,
        tuple(history.items),
        tuple(warnings),
        good_length,
        needs_newline,
        compactions,
        tuple(learned),
        tuple(checkpoints),
    )


def repair_hint(path: Path) -> str:
    return f"`agent sessions repair {path}` keeps the lines that parse (and the original beside it)"


def apply_record(history: History, record: Any, where: str) -> str | None:
    """Replay one line onto ``history``. Returns a warning for lines it does not understand."""
    if not isinstance(record, dict):
        raise RolloutError(f"{where} is not a JSON object")
    kind = record.get("type")
    try:
        if kind == "item":
            history.record(item_from_dict(record.get("item")))
        elif kind == "compaction":
            items = record.get("items")
            if not isinstance(items, list):
                raise ValueError("a compaction line needs an `items` array")
            history.replace([item_from_dict(entry) for entry in items])
        elif kind == "remove_oldest":
            history.remove_oldest()
        elif kind == REWIND_TYPE:
            length = record.get("length")
            if not isinstance(length, int) or isinstance(length, bool) or not 0 <= length <= len(history):
                raise ValueError("a rewind line needs a `length` within the history")
            history.replace(history.items[:length])
        else:
            return f"{where}: skipped a line of unknown type {kind!r}"
    except ValueError as exc:
        raise RolloutError(f"{where} is malformed: {exc}") from None
    return None


def read_header(path: Path) -> SessionHeader:
    """Only the header line (cheap: used to list sessions and find the latest one)."""
    try:
        with Path(path).open("rb") as handle:
            first = handle.readline(1 << 20)
    except OSError as exc:
        raise RolloutError(f"cannot read session file {path}: {exc.strerror}") from None
    try:
        record = json.loads(first.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise RolloutError(f"{path}: not an agent session file") from None
    return SessionHeader.from_dict(record, str(path))


# --- writing -------------------------------------------------------------------------------


class RolloutWriter:
    """Appends history operations to one session file.

    The file is created with the first item that is not harness context (:func:`opens_the_file`);
    lines before it wait in memory, so a session that never sends a prompt leaves no file behind.
    A write error disables the writer (a half-written line must not be followed by more) and is
    reported once through :meth:`take_warning`.
    """

    def __init__(self, path: Path, header: SessionHeader):
        self.path = Path(path)
        self.header = header
        self._fd: int | None = None
        self._disabled = False
        self._warning: str | None = None
        self._dir_synced = True  # set to False when this writer creates the file
        self._waiting: list[dict[str, Any]] = []  # context recorded before the file exists

    @classmethod
    def for_new_session(
        cls,
        agent_home: Path,
        session_id: str,
        cwd: Path,
        model: str,
        provider: str,
        path: Path | None = None,
        worktree: dict[str, str] | None = None,
    ) -> RolloutWriter:
        """A writer for a new session file; ``path`` overrides where it goes (a subagent's
        transcript); ``worktree``: the agent's worktree it runs in."""
        now = datetime.now().astimezone()
        header = SessionHeader(
            session_id, str(cwd), model, provider, now.isoformat(timespec="seconds"), worktree=worktree
        )
        return cls(path or session_path(agent_home, session_id, now), header)

    @property
    def exists(self) -> bool:
        return self._fd is not None

    def continue_file(self, path: Path) -> LoadedSession:
        """Point this (still unused) writer at an existing file, lock it and load it.

        A torn last line is cut off so new lines do not get glued to it.
        """
        if self._fd is not None or self._waiting:
            raise RuntimeError("continue_file() on a writer that already wrote")
        path = Path(path)
        try:
            fd = os.open(path, os.O_RDWR | os.O_APPEND | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            raise RolloutError(f"session file {path} does not exist") from None
        except OSError as exc:
            raise RolloutError(f"cannot open session file {path}: {exc.strerror}") from None
        try:
            _lock(fd, path)
            loaded = load_session_file(path)
            if os.fstat(fd).st_size > loaded.good_length:
                os.ftruncate(fd, loaded.good_length)
            if loaded.needs_newline:
                _write_all(fd, b"\n")
        except BaseException:
            os.close(fd)
            raise
        self.path, self.header, self._fd = path, loaded.header, fd
        return loaded

    def append_item(self, item: Item) -> None:
        record = {"type": "item", "item": item_to_dict(item)}
        if self._fd is None and not opens_the_file(item):
            self._waiting.append(record)  # written just before the first prompt, or never
            return
        self._append(record)

    def append_compaction(self, items: Iterable[Item]) -> None:
        self._append({"type": "compaction", "items": [item_to_dict(item) for item in items]})

    def append_remove_oldest(self) -> None:
        self._append({"type": "remove_oldest"})

    def append_learned(self, what: str, **fields: Any) -> None:
        """Something learned about the server (session/learned.py); it never creates the file."""
        record = {"type": LEARNED_TYPE, "what": what, **fields}
        if self._fd is None:
            self._waiting.append(record)
        else:
            self._append(record)

    def append_checkpoint(self, kind: str, **fields: Any) -> None:
        """A checkpoint line (session/checkpointing.py); like a learned line, it never creates the file."""
        self.append_learned_like({"type": kind, **fields})

    def append_learned_like(self, record: dict[str, Any]) -> None:
        if self._fd is None:
            self._waiting.append(record)
        else:
            self._append(record)

    def sync(self) -> None:
        """Make everything written so far durable (end of a turn)."""
        if self._fd is None or self._disabled:
            return
        try:
            os.fsync(self._fd)
            if not self._dir_synced:  # the new file's directory entry must survive a crash too
                _fsync_dir(self.path.parent)
                self._dir_synced = True
        except OSError as exc:
            self._fail(exc)

    def close(self) -> None:
        if self._fd is not None:
            self.sync()
            os.close(self._fd)
            self._fd = None
        self._disabled = True

    def write_nothing(self) -> None:
        """Write nothing more, and create no file (`agent exec --ephemeral`)."""
        if self._fd is not None:  # a resumed file: it stays as it was
            os.close(self._fd)
            self._fd = None
        self._disabled = True
        self._waiting = []

    def take_warning(self) -> str | None:
        """A write failure not yet reported to the user, if any."""
        warning, self._warning = self._warning, None
        return warning

    def _append(self, record: dict[str, Any]) -> None:
        if self._disabled:
            return
        try:
            if self._fd is None:
                self._create()
            _write_all(self._fd, encode_line(record))  # type: ignore[arg-type]
        except (OSError, RolloutError) as exc:
            self._fail(exc)

    def _create(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
        fd = os.open(self.path, flags, 0o600)  # transcripts can hold secrets: owner only
        try:
            _lock(fd, self.path)
            waiting, self._waiting = self._waiting, []
            _write_all(fd, b"".join(map(encode_line, [self.header.to_dict(), *waiting])))
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd
        self._dir_synced = False

    def _fail(self, exc: Exception) -> None:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        self._warning = f"the session is no longer being saved ({self.path}: {reason})"
        self._disabled = True


def opens_the_file(item: Item) -> bool:
    """Whether recording ``item`` creates the session file: anything but the context the harness
    adds (developer instructions, contextual fragments) before the first prompt."""
    if not isinstance(item, Message) or item.role == "assistant":
        return True
    return item.role == "user" and not is_contextual_fragment(item.text)


@contextlib.contextmanager
def lock_file(path: Path) -> Iterator[None]:
    """Hold ``path``'s lock for a moment (to delete it): SessionBusyError while an agent uses it."""
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        _lock(fd, path)
        yield
    finally:
        os.close(fd)


def _lock(fd: int, path: Path) -> None:
    if fcntl is None:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        raise SessionBusyError(f"session file {path} is in use by another running agent") from None
    except OSError:
        pass  # filesystems without flock support: carry on unlocked


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def _fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class RecordingHistory(History):
    """A History that appends every change to a session file as it happens.

    Every path that changes the history goes through here: ``record`` (turns, ``extend`` for the
    initial context, ``close_open_calls``), ``replace`` (compaction) and ``remove_oldest``.
    """

    def __init__(
        self, writer: RolloutWriter, items: Iterable[Item] = (), estimate: Callable[[Item], int] | None = None
    ):
        self.writer = writer
        self._muted = False
        with self._unrecorded():  # the constructor's items are not new
            super().__init__(items, estimate)

    def record(self, item: Item) -> None:
        super().record(item)
        if not self._muted:
            self.writer.append_item(self._items[-1])  # as stored (History may have truncated it)

    @contextlib.contextmanager
    def _unrecorded(self):
        """Items changed here are not written one by one (the caller writes what stands for them)."""
        self._muted = True
        try:
            yield
        finally:
            self._muted = False

    def replace(self, items: Iterable[Item]) -> None:
        with self._unrecorded():
            super().replace(items)
        self.writer.append_compaction(self._items)

    def remove_oldest(self) -> int:
        removed = super().remove_oldest()
        if removed:
            self.writer.append_remove_oldest()
        return removed

    def rewind(self, length: int, epoch: int = 0) -> None:
        """Go back to the first ``length`` items (/rewind); the file keeps the rest above the line.
        ``epoch``: compactions so far (checkpoints of this epoch after that point are abandoned)."""
        with self._unrecorded():
            super().replace(self._items[:length])
        self.writer.append_learned_like({"type": REWIND_TYPE, "length": length, "epoch": epoch})

    def restore(self, items: Iterable[Item]) -> None:
        """Load items that are already in the file (resume) without writing them again."""
        with self._unrecorded():
            super().extend(items)
