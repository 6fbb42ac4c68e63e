"""`agent sessions repair`: keep the lines of a damaged session file that still parse.

A line cut short at the end is already skipped on resume; a corrupt line in the middle (a disk
error, an editor, two writers) makes the file refuse to load, since what follows may depend on
it. Repair drops every line that is not valid JSON or does not replay, keeps the rest in order,
and leaves the original beside the file (``<name>.jsonl.corrupt-<time>``, not listed as a
session), so nothing is lost.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from agent_cli.context.history import History
from agent_cli.store.rollout import LEARNED_TYPE, RolloutError, SessionHeader, apply_record


@dataclass(frozen=True, slots=True)
class Repair:
    path: Path
    kept: int  # lines kept, the header included
    dropped: tuple[int, ...]  # 1-based numbers of the lines left out
    backup: Path | None  # the original file, None when nothing needed repair


def repair_session_file(path: Path) -> Repair:
    """Rewrite ``path`` without its bad lines. Raises RolloutError when it is no session file."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RolloutError(f"cannot read session file {path}: {exc.strerror}") from None
    lines = data.split(b"\n")
    try:
        SessionHeader.from_dict(json.loads(lines[0].decode("utf-8")), str(path))
    except (UnicodeDecodeError, ValueError, RecursionError):
        raise RolloutError(f"{path}: line 1 is not a session header; this is not a session file to repair") from None
    history = History()
    kept, dropped = [lines[0]], []
    for number, raw in enumerate(lines[1:], start=2):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw.decode("utf-8"))
            if not (isinstance(record, dict) and record.get("type") == LEARNED_TYPE):
                apply_record(history, record, f"line {number}")
        except (UnicodeDecodeError, ValueError, RecursionError, RolloutError):
            dropped.append(number)
            continue
        kept.append(raw)
    if not dropped:
        return Repair(path, len(kept), (), None)
    backup = path.with_name(f"{path.name}.corrupt-{datetime.now():%Y%m%dT%H%M%S}")
    _write_private(backup, data)
    _write_private(path, b"\n".join(kept) + b"\n", replace=True)
    return Repair(path, len(kept), tuple(dropped), backup)


def _write_private(path: Path, data: bytes, replace: bool = False) -> None:
    """Owner-only, as session files are; ``replace`` swaps the file in whole (never half-written)."""
    target = path.with_name(path.name + ".partial") if replace else path
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with open(fd, "wb") as out:
        out.write(data)
        out.flush()
        os.fsync(out.fileno())
    if replace:
        os.replace(target, path)
