"""The pure parts of compaction: what survives, how the history is rebuilt, and the fallback.

After a compaction the history is::

    initial context (fresh)  +  recent real user messages (<= budget)  +  summary message

The last real user message is always kept whole (the task must never be lost); older ones are
kept newest first while they fit, and the oldest one that does not fit is cut in the middle.
When the summarizer fails, a head-and-tail excerpt of the transcript takes the summary's place.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from agent_cli.context.fragments import NO_SUMMARY, is_contextual_fragment, is_real_user_message
from agent_cli.context.image_items import images_of, old_image_placeholders
from agent_cli.context.truncate import TruncationPolicy, truncate_middle
from agent_cli.items import Item, Message, Reasoning, ToolCall, ToolOutput, user

USER_MESSAGES_TOKEN_BUDGET = 20_000  # as Codex: recent user messages kept through a compaction
MIN_TRUNCATED_TOKENS = 64  # below this, a cut message says too little to be worth keeping
FALLBACK_NOTE = (
    "(The summarizer failed, so this is a head-and-tail excerpt of the earlier conversation "
    "instead of a summary. The middle was dropped.)"
)

Count = Callable[[str], int]


@dataclass(frozen=True, slots=True)
class Rebuilt:
    items: list[Item]
    kept_user_messages: int
    truncated_user_message: bool


def user_message_budget(auto_compact_limit: int | None, effective_window: int) -> int:
    """20,000 tokens, but never more than a quarter of what a request may carry."""
    ceiling = auto_compact_limit if auto_compact_limit else effective_window
    return max(MIN_TRUNCATED_TOKENS, min(USER_MESSAGES_TOKEN_BUDGET, ceiling // 4))


def real_user_messages(items: Sequence[Item], prefix: str | None = None) -> list[Message]:
    """What the user typed, oldest first: no fragments, no earlier summaries."""
    return [item for item in items if isinstance(item, Message) and is_real_user_message(item, prefix)]


def select_user_messages(messages: Sequence[Message], budget: int, count: Count) -> tuple[list[Message], bool]:
    """The most recent ``messages`` that fit ``budget`` tokens, oldest first.

    The newest message is always kept whole, even over budget. The first older message that
    does not fit is cut in the middle to the remaining budget (when enough remains to be
    useful) and nothing older is kept. Returns the messages and whether one was cut.
    """
    if not messages:
        return [], False
    newest = messages[-1]
    kept = [newest]
    remaining = budget - count(newest.text)
    truncated = False
    for message in reversed(messages[:-1]):
        tokens = count(message.text)
        if tokens <= remaining:
            kept.append(message)
            remaining -= tokens
            continue
        if remaining >= MIN_TRUNCATED_TOKENS:
            kept.append(user(truncate_middle(message.text, TruncationPolicy("tokens", remaining))))
            truncated = True
        break
    kept.reverse()
    return kept, truncated


def rebuild_history(
    initial_items: Sequence[Item],
    history: Sequence[Item],
    summary: str,
    *,
    budget: int,
    count: Count,
    summary_prefix: str,
) -> Rebuilt:
    """The compacted history: fresh initial context, recent user messages, then the summary.

    ``summary_prefix`` is the rendered ``prompts/summary_prefix.md``; an empty ``summary``
    becomes ``(no summary available)``.
    """
    messages, truncated = select_user_messages(real_user_messages(history, summary_prefix), budget, count)
    summary_text = f"{summary_prefix.strip()}\n\n{summary.strip() or NO_SUMMARY}"
    kept = {id(message) for message in messages}
    if old_images := old_image_placeholders(item for item in history if id(item) not in kept):
        summary_text += f"\n\n{old_images}"  # dropped images are named, never sent again
    summary_message = user(summary_text)
    items: list[Item] = [*initial_items, *messages, summary_message]
    return Rebuilt(items, len(messages), truncated)


def protected_prefix_length(items: Sequence[Item]) -> int:
    """How many leading items are harness context, user messages or a summary.

    That run (initial context, the task, a previous compaction's kept messages and summary) is
    what the summarizer needs most, so trimming an overflowing summarizing request starts after
    it.
    """
    for index, item in enumerate(items):
        if not (isinstance(item, Message) and item.role in ("user", "developer")):
            return index
    return len(items)


def trim_oldest(
    items: Sequence[Item], tokens: Sequence[int], start: int, target: int
) -> tuple[list[Item], list[int], int]:
    """Drop items from ``start`` on, oldest first, until their estimates sum to ``target`` or less.

    At least one item goes (the provider said the request does not fit); a tool call and its
    output always go together. Returns the kept items, their estimates and how many were dropped.
    """
    partners: dict[str, list[int]] = {}
    for index in range(start, len(items)):
        item = items[index]
        if isinstance(item, (ToolCall, ToolOutput)):
            partners.setdefault(item.call_id, []).append(index)
    dropped = [False] * len(items)
    total = sum(tokens)
    removed = 0
    index = start
    while index < len(items) and (removed == 0 or total > target):
        item = items[index]
        group = partners[item.call_id] if isinstance(item, (ToolCall, ToolOutput)) else [index]
        for victim in group:
            if not dropped[victim]:
                dropped[victim] = True
                total -= tokens[victim]
                removed += 1
        index += 1
        while index < len(items) and dropped[index]:
            index += 1
    kept = [i for i in range(len(items)) if not dropped[i]]
    return [items[i] for i in kept], [tokens[i] for i in kept], removed


# --- fallback: head and tail of the transcript ------------------------------------------------


def transcript_line(item: Item) -> str | None:
    """One item as plain text for the fallback excerpt (None for what is not worth keeping)."""
    images = "".join(f"\n{image.placeholder}" for image in images_of(item))
    if isinstance(item, Message):
        if item.role == "developer" or is_contextual_fragment(item.text):
            return None
        return f"[{item.role}] {item.text.strip()}{images}"
    if isinstance(item, ToolCall):
        return f"[tool call {item.name}] {item.arguments.strip()}"
    if isinstance(item, ToolOutput):
        status = "" if item.success else " (failed)"
        return f"[tool output{status}] {item.output.strip()}{images}"
    if isinstance(item, Reasoning):
        return None  # reasoning is long and rarely needed to continue
    return None


def transcript(items: Sequence[Item]) -> str:
    return "\n\n".join(line for item in items if (line := transcript_line(item)) is not None)


def fallback_summary(items: Sequence[Item], budget: int) -> str:
    """A head-and-tail excerpt of the conversation within ``budget`` tokens, with a note."""
    text = transcript(items)
    if not text.strip():
        return ""
    excerpt = truncate_middle(text, TruncationPolicy("tokens", max(0, budget)))
    return f"{FALLBACK_NOTE}\n\n{excerpt}"
