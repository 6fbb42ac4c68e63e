"""The history of a live session: every change appended to its session file as it happens
(the file's format: rollout.py)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable

from agent_cli.context.history import History
from agent_cli.items import Item
from agent_cli.store.rollout import REWIND_TYPE, RolloutWriter


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
