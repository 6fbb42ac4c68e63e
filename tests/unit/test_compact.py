"""The pure parts of compaction: kept user messages, the rebuilt history, trimming, fallback."""

from __future__ import annotations

import pytest

from agent_cli.context.compact import (
    FALLBACK_NOTE,
    MIN_TRUNCATED_TOKENS,
    USER_MESSAGES_TOKEN_BUDGET,
    fallback_summary,
    protected_prefix_length,
    real_user_messages,
    rebuild_history,
    select_user_messages,
    transcript,
    trim_oldest,
    user_message_budget,
)
from agent_cli.context.fragments import ENVIRONMENT_CONTEXT, NO_SUMMARY, agents_md_text
from agent_cli.context.tokens import approx_text_tokens
from agent_cli.context.truncate import approx_tokens
from agent_cli.items import Message, Reasoning, ToolCall, ToolOutput, assistant, developer, user

PREFIX = "Another language model worked on this task before you and wrote the hand-off summary below."
count = approx_text_tokens


def initial_items() -> list[Message]:
    return [
        developer("<permissions>\nrules\n</permissions>"),
        user(agents_md_text("/repo", "Always run the tests with `make test`.")),
        user(ENVIRONMENT_CONTEXT.wrap("<cwd>/repo</cwd>")),
    ]


def conversation() -> list:
    return [
        *initial_items(),
        user("Task: fix the failing parser test in parser.py"),
        Reasoning("let me look"),
        ToolCall("c1", "read_file", '{"path": "parser.py"}'),
        ToolOutput("c1", "def parse(): ..." * 50),
        assistant("Found it."),
        user("Also keep the public API unchanged."),
        ToolCall("c2", "shell", '{"command": "make test"}'),
        ToolOutput("c2", "1 failed", success=False),
    ]


def test_real_user_messages_skip_fragments_and_summaries():
    items = [*conversation(), user(f"{PREFIX}\n\nold summary")]
    texts = [m.text for m in real_user_messages(items, PREFIX)]
    assert texts == ["Task: fix the failing parser test in parser.py", "Also keep the public API unchanged."]


def test_all_messages_kept_when_they_fit_in_order():
    messages = [user("one"), user("two"), user("three")]
    kept, truncated = select_user_messages(messages, 1000, count)
    assert [m.text for m in kept] == ["one", "two", "three"]
    assert not truncated


def test_newest_is_kept_whole_even_over_budget():
    huge = user("z" * 40_000)  # 10,000 tokens
    kept, truncated = select_user_messages([user("older"), huge], 100, count)
    assert kept == [huge]
    assert not truncated


def test_oldest_that_does_not_fit_is_cut_and_nothing_older_is_kept():
    messages = [user("ancient"), user("a" * 4000), user("b" * 400), user("newest")]
    budget = 400  # newest ~2 + b 100 leaves ~298 for a (1000 tokens)
    kept, truncated = select_user_messages(messages, budget, count)
    assert truncated
    assert [m.text[:1] for m in kept] == ["a", "b", "n"]
    assert kept[1].text == "b" * 400 and kept[2].text == "newest"
    assert "tokens truncated" in kept[0].text
    assert sum(count(m.text) for m in kept) <= budget
    assert kept[0].text.startswith("aaa") and kept[0].text.endswith("aaa")  # head and tail survive


def test_a_sliver_is_not_worth_keeping():
    messages = [user("a" * 4000), user("n" * ((400 - MIN_TRUNCATED_TOKENS + 4) * 4))]
    kept, truncated = select_user_messages(messages, 400, count)
    assert len(kept) == 1 and not truncated


def test_no_messages():
    assert select_user_messages([], 100, count) == ([], False)


def test_budget_is_20k_but_at_most_a_quarter_of_the_limit():
    assert user_message_budget(None, 258_400) == USER_MESSAGES_TOKEN_BUDGET
    assert user_message_budget(12_920, 15_200) == 3_230
    assert user_message_budget(None, 15_200) == 3_800


def test_rebuild_layout_fresh_initial_then_user_messages_then_summary():
    fresh = [developer("<permissions>\nnew rules\n</permissions>"), user(ENVIRONMENT_CONTEXT.wrap("<cwd>/x</cwd>"))]
    history = [*conversation(), user(f"{PREFIX}\n\nprevious summary")]
    rebuilt = rebuild_history(
        fresh, history, "## Active task\nfix parser", budget=20_000, count=count, summary_prefix=PREFIX
    )
    items = rebuilt.items
    assert items[:2] == fresh
    assert [m.text for m in items[2:4]] == [
        "Task: fix the failing parser test in parser.py",
        "Also keep the public API unchanged.",
    ]
    assert items[-1] == user(f"{PREFIX}\n\n## Active task\nfix parser")
    assert len(items) == 5  # the old summary, tool calls and outputs are gone
    assert rebuilt.kept_user_messages == 2 and not rebuilt.truncated_user_message


def test_empty_summary_becomes_no_summary_available():
    rebuilt = rebuild_history([], [user("task")], "  \n", budget=100, count=count, summary_prefix=PREFIX)
    assert rebuilt.items[-1].text == f"{PREFIX}\n\n{NO_SUMMARY}"


def test_protected_prefix_is_the_leading_context_and_user_run():
    assert protected_prefix_length(conversation()) == 4  # 3 context items + the task
    assert protected_prefix_length([user("a"), user("b")]) == 2
    assert protected_prefix_length([assistant("a")]) == 0


def test_trim_oldest_keeps_pairs_together_and_starts_after_the_protected_prefix():
    items = conversation()
    tokens = [10] * len(items)
    kept, kept_tokens, removed = trim_oldest(items, tokens, 4, target=0)
    assert kept == items[:4]
    assert removed == len(items) - 4
    kept, kept_tokens, removed = trim_oldest(items, tokens, 4, target=sum(tokens) - 15)
    # the reasoning (10) goes, then the read_file call takes its output with it
    assert removed == 3
    assert not any(isinstance(i, (ToolCall, ToolOutput)) and i.call_id == "c1" for i in kept)
    assert sum(kept_tokens) == sum(tokens) - 30


def test_trim_oldest_removes_at_least_one_item():
    items = conversation()
    kept, _, removed = trim_oldest(items, [1] * len(items), 4, target=10_000)
    assert removed == 1 and kept == items[:4] + items[5:]


def test_trim_oldest_with_an_output_before_its_call_drops_both():
    items = [ToolOutput("c9", "orphan-first"), user("x"), ToolCall("c9", "shell", "{}")]
    kept, _, removed = trim_oldest(items, [5, 5, 5], 0, target=5)
    assert kept == [user("x")] and removed == 2


def test_trim_oldest_nothing_to_drop():
    items = [user("task")]
    assert trim_oldest(items, [5], 1, target=0) == ([user("task")], [5], 0)


@pytest.mark.serial  # timed: a bound of 1 s
def test_trim_oldest_is_fast_on_long_histories():
    import time

    items = []
    for i in range(5000):
        items += [ToolCall(f"c{i}", "shell", "{}"), ToolOutput(f"c{i}", "x")]
    started = time.perf_counter()
    kept, _, removed = trim_oldest(items, [1] * len(items), 0, target=10)
    assert len(kept) == 10 and removed == 9990
    assert time.perf_counter() - started < 1.0


def test_transcript_skips_context_and_reasoning():
    text = transcript(conversation())
    assert "<permissions>" not in text and "AGENTS.md" not in text and "environment_context" not in text
    assert "let me look" not in text
    assert "[user] Task: fix the failing parser test" in text
    assert '[tool call shell] {"command": "make test"}' in text
    assert "[tool output (failed)] 1 failed" in text


def test_fallback_keeps_head_and_tail_within_budget():
    items = [user("THE TASK"), *[ToolOutput(f"c{i}", f"output {i} " * 200) for i in range(30)], user("LAST WORDS")]
    summary = fallback_summary(items, 500)
    assert summary.startswith(FALLBACK_NOTE)
    body = summary[len(FALLBACK_NOTE) :]
    assert "THE TASK" in body and "LAST WORDS" in body
    assert "tokens truncated" in body
    assert approx_tokens(body) <= 501


def test_fallback_of_nothing_is_empty():
    assert fallback_summary(initial_items(), 500) == ""
