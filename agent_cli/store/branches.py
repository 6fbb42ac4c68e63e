"""A session file's prompts in the order they were typed, with what became of each: still in the
conversation, abandoned by a /rewind (the file keeps that branch), or summarized by a compaction.
`agent sessions ID` prints it."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from agent_cli.context.fragments import is_real_user_message
from agent_cli.context.history import History
from agent_cli.items import Message, item_from_dict
from agent_cli.store.rollout import REWIND_TYPE, RolloutError, apply_record


@dataclass
class PromptLine:
    text: str
    state: str = "current"  # "current", "abandoned" (a rewind went back past it) or "compacted"
    rewind: bool = False  # not a prompt: the point where the conversation went back


def prompt_timeline(path: Path) -> list[PromptLine]:
    try:
        lines = Path(path).read_bytes().split(b"\n")[1:]
    except OSError as exc:
        raise RolloutError(f"cannot read session file {path}: {exc.strerror}") from None
    history = History()
    timeline: list[PromptLine] = []
    live: list[tuple[PromptLine, int]] = []  # prompts still in the history, with their index
    for raw in lines:
        try:
            record = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            continue  # a torn line: load_session_file reports it
        kind = record.get("type") if isinstance(record, dict) else None
        if kind not in ("item", "compaction", "remove_oldest", REWIND_TYPE):
            continue
        before = len(history)
        try:
            apply_record(history, record, str(path))
        except RolloutError:
            continue
        if kind == "item":
            item = item_from_dict(record["item"])
            if is_real_user_message(item):
                assert isinstance(item, Message)
                entry = PromptLine(item.typed or item.text)
                timeline.append(entry)
                live.append((entry, len(history) - 1))
        elif kind == "compaction":
            for entry, _ in live:
                entry.state = "compacted"
            live = []
        elif kind == "remove_oldest":
            gone = before - len(history)
            live = [(entry, index - gone) for entry, index in live if index >= gone]
        else:
            length = record["length"]
            for entry, index in live:
                if index >= length:
                    entry.state = "abandoned"
            live = [(entry, index) for entry, index in live if index < length]
            timeline.append(PromptLine("", rewind=True))
    return timeline


def format_timeline(timeline: list[PromptLine]) -> str:
    rows, number = [], 0
    for entry in timeline:
        if entry.rewind:
            rows.append("      ↩ rewound: the conversation went back here")
            continue
        number += 1
        text = " ".join(entry.text.split())
        text = text if len(text) <= 100 else text[:99] + "…"
        note = {"abandoned": "  [abandoned branch]", "compacted": "  [compacted]"}.get(entry.state, "")
        rows.append(f"{number:>4}  {text}{note}")
    return "\n".join(rows) if rows else "(no prompts)"
