"""What a compaction took out of the context: files read, tool outputs (with their spill files)
and messages, for ``/compact show`` and exec's compaction item. Pure functions over items."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Sequence

from agent_cli.context.fragments import is_real_user_message
from agent_cli.events import DroppedItem
from agent_cli.items import Item, Message, ToolCall, ToolOutput

LABEL_CHARS = 120
_SPILL = re.compile(r"saved to (\S+?);")
_MAIN_ARGUMENT = {"read_file": "path", "shell": "command", "grep": "pattern", "list_dir": "path"}


def call_label(call: ToolCall) -> str:
    """``read_file``'s path, ``shell``'s command, else the tool and its arguments, on one line."""
    try:
        args = json.loads(call.arguments or "{}")
    except json.JSONDecodeError:
        args = call.arguments
    key = _MAIN_ARGUMENT.get(call.name)
    if isinstance(args, dict) and key and isinstance(args.get(key), str):
        text = args[key] if call.name in ("read_file", "shell") else f"{call.name} {args[key]}"
    else:
        text = f"{call.name} {json.dumps(args, ensure_ascii=False) if not isinstance(args, str) else args}"
    text = " ".join(text.split())
    return text if len(text) <= LABEL_CHARS else text[: LABEL_CHARS - 1] + "…"


def dropped_items(
    old: Sequence[Item], kept: Sequence[Item], tokens: Callable[[Item], int], summary_prefix: str | None = None
) -> list[DroppedItem]:
    """Items of ``old`` that are not in ``kept``: each tool call with its output, then the messages
    (assistant answers and user messages that were not kept) as one line each."""
    kept_ids = {id(item) for item in kept}
    calls = {item.call_id: item for item in old if isinstance(item, ToolCall)}
    result: list[DroppedItem] = []
    for item in old:
        if id(item) in kept_ids:
            continue
        if isinstance(item, ToolOutput) and item.call_id in calls:
            call = calls[item.call_id]
            spill = _SPILL.search(item.output)
            kind = "file" if call.name == "read_file" else "output"
            result.append(
                DroppedItem(kind, call_label(call), tokens(call) + tokens(item), spill.group(1) if spill else None)
            )
        elif isinstance(item, Message) and (item.role == "assistant" or is_real_user_message(item, summary_prefix)):
            first = " ".join(item.text.split())
            label = f"{item.role}: {first[: LABEL_CHARS - 10]}{'…' if len(first) > LABEL_CHARS - 10 else ''}"
            result.append(DroppedItem("message", label, tokens(item)))
    return result


def render_dropped(summary: str, dropped: Sequence[DroppedItem]) -> str:
    """``/compact show``: the summary the model now works from, then what left the context."""
    lines = ["The summary the model now works from:", "", summary.strip() or "(no summary)", ""]
    if not dropped:
        lines.append("Nothing else left the context.")
        return "\n".join(lines)
    total = sum(entry.tokens for entry in dropped)
    lines.append(f"What left the context ({len(dropped)} items, about {total:,} tokens; the session file keeps them):")
    for title, kind in (("Files read", "file"), ("Tool outputs", "output"), ("Messages", "message")):
        entries = [entry for entry in dropped if entry.kind == kind]
        if not entries:
            continue
        lines.append(f"{title}:")
        for entry in entries:
            spill = f" (full output: {entry.spill_file})" if entry.spill_file else ""
            lines.append(f"  - {entry.label} ({entry.tokens:,} tokens){spill}")
    return "\n".join(lines)
