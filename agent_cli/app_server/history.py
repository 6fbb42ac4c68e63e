"""A saved conversation as Codex's turns: what ``thread/read``, ``thread/resume`` and
``thread/turns/list`` return. A turn starts at each message the user typed; its items are the
events the TUI's replay shows (store/replay.py), shaped by the same :class:`TurnItems` a live turn
uses, so a client sees a stored turn as it saw it live."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from typing import Any

from agent_cli.app_server.turn_items import TurnItems
from agent_cli.context.fragments import TURN_ABORTED, is_real_user_message
from agent_cli.items import Item, Message, ToolCall, ToolOutput
from agent_cli.store.replay import replay_events


def split_turns(items: Sequence[Item]) -> list[list[Item]]:
    """The history cut before each message the user typed; what comes before the first (the
    initial context) belongs to no turn."""
    turns: list[list[Item]] = []
    for item in items:
        if is_real_user_message(item):
            turns.append([item])
        elif turns:
            turns[-1].append(item)
    return turns


def finished(turn: Sequence[Item]) -> bool:
    """The turn ended with an answer (not cut off mid-way by an interrupt or a killed process)."""
    return not noted_interrupted(turn) and answered(turn)


def noted_interrupted(turn: Sequence[Item]) -> bool:
    """An interrupt left its note for the model in the turn."""
    return any(isinstance(item, Message) and item.role == "user" and TURN_ABORTED.matches(item.text) for item in turn)


def answered(turn: Sequence[Item]) -> bool:
    """The turn's last word is the model's answer (a turn a killed process cut off has none)."""
    meaningful = [item for item in turn if isinstance(item, (Message, ToolCall, ToolOutput))]
    last = meaningful[-1] if meaningful else None
    return isinstance(last, Message) and last.role == "assistant"


def stored_turn_id(thread_id: str, index: int) -> str:
    """The same turn of the same thread always has the same id (a UUID, as Codex's TUI expects)."""
    return str(uuid.uuid5(uuid.UUID(thread_id), f"turn {index + 1}"))


def stored_turns(thread_id: str, items: Sequence[Item], cwd: str, with_items: bool = True) -> list[dict[str, Any]]:
    """Every turn of ``items`` (oldest first), in the ``Turn`` shape."""
    turns = []
    for index, turn in enumerate(split_turns(items)):
        turn_id = stored_turn_id(thread_id, index)
        shaped = TurnItems(thread_id, turn_id, cwd)
        for event in replay_events(list(turn), limit=None):
            shaped.feed(event)
        shaped.close_open()
        turns.append(
            {
                "id": turn_id,
                "items": shaped.completed_items() if with_items else [],
                "itemsView": "full" if with_items else "notLoaded",
                "status": "completed" if finished(turn) else "interrupted",
                "error": None,
                "startedAt": None,
                "completedAt": None,
                "durationMs": None,
            }
        )
    return turns


def preview(items: Sequence[Item]) -> str:
    """The first message the user typed (what a thread list shows)."""
    for item in items:
        if is_real_user_message(item) and isinstance(item, Message):
            return item.typed or item.text
    return ""
