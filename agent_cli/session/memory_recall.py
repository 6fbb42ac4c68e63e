"""The ``<memories>`` fragment: what each user turn recalls, placed right after the message.

Never in the system prompt, so the request prefix stays byte-identical. A memory already in the
current context is not sent again; after a compaction (which drops the fragments) the memories
are recalled afresh for the latest message. Imported by the turn, so it stays light: the stores
(and ``sqlite3``) load on the first recall.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from agent_cli import events as ev
from agent_cli.config import Config
from agent_cli.context.fragments import MEMORIES, is_real_user_message
from agent_cli.items import Item, Message, user
from agent_cli.memory.model import as_model_text
from agent_cli.session.state import Emit
from agent_cli.store.rollout import RecordingHistory

if TYPE_CHECKING:
    from agent_cli.memory.book import MemoryBook
    from agent_cli.memory.ranking import Scored

_REF = re.compile(r"^- \[([spu]\d+)\]", re.MULTILINE)


def render_fragment(recalled: Sequence[Scored]) -> str:
    lines = []
    for item in recalled:
        lines.append(f"- [{item.memory.ref}] {as_model_text(item.memory.text)}")
    return MEMORIES.wrap("\n".join(lines))


def injected_refs(items: Iterable[Item]) -> set[str]:
    """Refs of the memories the fragments among ``items`` carry."""
    refs: set[str] = set()
    for item in items:
        if isinstance(item, Message) and item.role == "user" and MEMORIES.matches(item.text):
            refs.update(_REF.findall(item.text))
    return refs


def recall_into_history(
    config: Config, history: RecordingHistory, book: MemoryBook | None, message: str, emit: Emit
) -> None:
    """Recall for ``message`` and append the fragment to ``history`` (when anything scores high enough)."""
    if book is None:
        return
    book.last_query = message
    if not message.strip():
        return
    if book.injected is None:  # first recall of this session (or of a resumed one)
        book.injected = injected_refs(history.items)
    try:
        recalled = book.recall(
            message,
            top_k=config.memory_top_k,
            max_chars=config.memory_max_chars,
            min_score=config.memory_min_score,
            exclude=book.injected,
        )
    except Exception as exc:  # noqa: BLE001 - memory must never stop a turn
        recalled = []
        emit(ev.Warning(f"memory recall failed: {type(exc).__name__}: {exc}"))
    report_warnings(book, emit)
    if recalled:
        history.record(user(render_fragment(recalled)))
        book.injected.update(item.memory.ref for item in recalled)


def recall_after_compaction(config: Config, history: RecordingHistory, book: MemoryBook | None, emit: Emit) -> None:
    """The compacted history has no memory fragments: recall again for the latest message."""
    if book is None:
        return
    book.injected = set()
    query = book.last_query
    if query is None:  # resumed and compacted before a turn: the latest message is all there is
        messages = [item for item in history.items if is_real_user_message(item)]
        query = messages[-1].text if messages else ""  # type: ignore[union-attr]
    recall_into_history(config, history, book, query, emit)


def report_warnings(book: MemoryBook, emit: Emit) -> None:
    for warning in book.take_warnings():
        emit(ev.Warning(warning))


def without_memories(items: Sequence[Item]) -> list[Item]:
    """``items`` minus the memory fragments (what the compaction summary is written from)."""
    return [
        item
        for item in items
        if not (isinstance(item, Message) and item.role == "user" and MEMORIES.matches(item.text))
    ]
