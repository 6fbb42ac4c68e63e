"""A session's checkpoints, as its session file records them, and which of them a restore uses.

Each checkpoint holds the snapshot taken before a turn changed files (``before``) and, once the
turn ended, the one taken after it (``after``: what a later hand edit is told apart from). Undoing
marks checkpoints ``undone``; rewinding the conversation past one marks it ``abandoned`` (its
turn is the abandoned branch). Only the others can still be restored.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from agent_cli.checkpoints.restore import RestorePlan, plan_restore
from agent_cli.checkpoints.snapshot import DEFAULT_MAX_FILE_BYTES, read_snapshot
from agent_cli.checkpoints.store import Store

_SAVED = ("id", "turn", "epoch", "prompt_index", "prompt", "store", "git_dir", "work_tree", "before", "skipped")


@dataclass
class Checkpoint:
    id: str
    turn: int
    epoch: int  # compactions before it: prompt_index means something only in the same epoch
    prompt_index: int  # where the turn's prompt is in the history (checked against it before use)
    prompt: str  # the prompt as typed, for pickers
    store: str  # "git" or "shadow"
    git_dir: str
    work_tree: str
    before: str  # commit of the snapshot before the turn changed anything
    skipped: list[str] = field(default_factory=list)
    max_file_bytes: int = DEFAULT_MAX_FILE_BYTES  # the size limit it was taken with (a restore scans alike)
    after: str | None = None  # commit of the snapshot when the turn ended
    files: int = 0  # what the turn changed (known once `after` is)
    added: int = 0
    removed: int = 0
    undone: bool = False
    abandoned: bool = False

    @property
    def active(self) -> bool:
        return not self.undone and not self.abandoned

    def location(self) -> Store:
        return Store.of(self.store, Path(self.git_dir), Path(self.work_tree))

    def record(self) -> dict[str, Any]:
        data = asdict(self)
        return {name: data[name] for name in (*_SAVED, "max_file_bytes")}

    def changes(self) -> str:
        if self.after is None:
            return "changes unknown (the turn did not finish)"
        return f"{self.files} file(s) +{self.added} -{self.removed}"


class Ledger:
    def __init__(self) -> None:
        self.checkpoints: list[Checkpoint] = []

    def add(self, checkpoint: Checkpoint) -> None:
        self.checkpoints.append(checkpoint)

    def get(self, checkpoint_id: str) -> Checkpoint | None:
        return next((c for c in self.checkpoints if c.id == checkpoint_id), None)

    def replay(self, record: dict[str, Any]) -> None:
        """Apply one line of a session file (checkpoint lines and rewind lines, in file order)."""
        kind = record.get("type")
        if kind == "checkpoint":
            try:
                self.add(
                    Checkpoint(
                        **{name: record[name] for name in _SAVED},
                        max_file_bytes=int(record.get("max_file_bytes", DEFAULT_MAX_FILE_BYTES)),
                    )
                )
            except (KeyError, TypeError):
                return  # a damaged line: that checkpoint is simply not offered
        elif kind == "checkpoint_after" and (checkpoint := self.get(str(record.get("id")))):
            checkpoint.after = record.get("after")
            checkpoint.files, checkpoint.added, checkpoint.removed = (
                int(record.get(name, 0)) for name in ("files", "added", "removed")
            )
        elif kind == "checkpoint_undone":
            for checkpoint_id in record.get("ids", ()):
                if checkpoint := self.get(str(checkpoint_id)):
                    checkpoint.undone = True
        elif kind == "rewind":
            self.abandon_from(int(record.get("length", 0)), int(record.get("epoch", 0)))

    def abandon_from(self, history_length: int, epoch: int) -> list[Checkpoint]:
        """The conversation went back to ``history_length`` items: later turns are abandoned."""
        gone = [c for c in self.checkpoints if c.active and c.epoch == epoch and c.prompt_index >= history_length]
        for checkpoint in gone:
            checkpoint.abandoned = True
        return gone

    def active(self) -> list[Checkpoint]:
        return [c for c in self.checkpoints if c.active]

    def last(self) -> list[Checkpoint]:
        """What /undo takes back: the last turn that changed files."""
        active = self.active()
        return active[-1:]

    def since_prompt(self, history_index: int, epoch: int) -> list[Checkpoint]:
        """What rewinding the code to before the prompt at ``history_index`` takes back."""
        return [c for c in self.active() if c.epoch > epoch or (c.epoch == epoch and c.prompt_index >= history_index)]


def plan_for(checkpoints: list[Checkpoint], scratch_index: Path, time_limit: float | None = 120) -> RestorePlan:
    """Taking back every turn of ``checkpoints`` (consecutive, oldest first) at once: back to the
    first one's ``before``, hand edits judged against the last one's ``after``."""
    first, last = checkpoints[0], checkpoints[-1]
    store = first.location()
    before = read_snapshot(store, first.before)
    after = read_snapshot(store, last.after) if last.after else None
    return plan_restore(store, before, after, scratch_index, first.max_file_bytes, time_limit)
