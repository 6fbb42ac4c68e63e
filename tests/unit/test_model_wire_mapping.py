"""Edge cases of translating our items to and from each wire format (pure functions)."""

from __future__ import annotations

from agent_cli import items
from agent_cli.items import Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.anthropic_messages import REDACTED_THINKING_ID, _Block, anthropic_messages
from agent_cli.models.openai_chat import _ChatAccumulator, chat_messages
from agent_cli.models.openai_responses import input_items, output_item


def test_chat_without_instructions_or_leading_developer_has_no_system_message():
    assert chat_messages("", [items.user("hi")]) == [{"role": "user", "content": "hi"}]


def test_chat_tool_call_after_user_message_starts_an_assistant_message():
    messages = chat_messages("", [items.user("hi"), ToolCall("c1", "shell", "{}")])
    assert messages[-1] == {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "shell", "arguments": "{}"}}],
    }


def test_chat_accumulator_tolerates_missing_index_and_id():
    acc = _ChatAccumulator()
    acc.add_tool_deltas([{"id": "a", "function": {"name": "shell", "arguments": '{"co'}}])
    acc.add_tool_deltas([{"function": {"arguments": 'mmand": "ls"}'}}])
    acc.add_tool_deltas([{"id": "b", "function": {"name": "read", "arguments": ""}}])
    acc.add_tool_deltas([{"index": 5, "function": {"name": "noid"}}])
    calls = acc.items()
    assert [(c.call_id, c.name, c.arguments) for c in calls[:2]] == [
        ("a", "shell", '{"command": "ls"}'),
        ("b", "read", "{}"),
    ]
    assert calls[2].name == "noid" and calls[2].call_id.startswith("call_") and calls[2].arguments == "{}"


def test_chat_accumulator_splits_a_reused_index():
    acc = _ChatAccumulator()
    acc.add_tool_deltas([{"index": 0, "id": "a", "function": {"name": "one", "arguments": "{}"}}])
    acc.add_tool_deltas([{"index": 0, "id": "b", "function": {"name": "two", "arguments": "{}"}}])
    assert [c.name for c in acc.items()] == ["one", "two"]


def test_responses_input_skips_empty_assistant_text_and_unsendable_reasoning():
    mapped = input_items(
        [
            Message("assistant", ""),
            Reasoning("x", encrypted_content="E"),  # no id
            Reasoning("y", id="rs_1"),
        ]
    )  # no encrypted content
    assert mapped == []


def test_responses_output_items():
    assert output_item(
        {
            "type": "message",
            "id": "m",
            "content": [
                {"type": "output_text", "text": "a"},
                {"type": "refusal", "refusal": "no"},
                {"type": "output_text", "text": "b"},
            ],
        }
    ) == Message("assistant", "anob", id="m")  # every part in order, as the deltas streamed them
    assert output_item({"type": "message", "id": "m", "content": [{"type": "refusal", "refusal": "no"}]}) == Message(
        "assistant", "no", id="m"
    )  # a refusal alone is the answer (the stop reason marks it)
    assert output_item(
        {"type": "reasoning", "id": "r", "summary": [{"text": "one"}, {"text": "two"}], "encrypted_content": "E"}
    ) == Reasoning("one\n\ntwo", id="r", encrypted_content="E")
    assert output_item({"type": "reasoning", "id": "r", "summary": [], "content": [{"text": "raw"}]}).text == "raw"
    assert output_item({"type": "function_call", "id": "fc", "call_id": "c", "name": "n", "arguments": ""}) == ToolCall(
        "c", "n", "{}", id="fc"
    )
    assert output_item({"type": "web_search_call", "id": "w"}) is None


def test_anthropic_conversation_starting_with_assistant_gets_a_user_turn_first():
    turns = anthropic_messages([Message("assistant", "earlier answer"), items.user("go on")])
    assert [t["role"] for t in turns] == ["user", "assistant", "user"]


def test_anthropic_tool_results_lead_a_merged_user_turn_and_empty_text_is_dropped():
    turns = anthropic_messages(
        [
            items.user("q"),
            ToolCall("t1", "shell", "{}"),
            items.developer("note"),
            items.user(""),
            ToolOutput("t1", "out"),
        ]
    )
    assert [b["type"] for b in turns[-1]["content"]] == ["tool_result", "text"]
    assert turns[-1]["content"][-1]["cache_control"] == {"type": "ephemeral"}


def test_anthropic_breakpoints_only_on_the_last_two_user_turns():
    history = []
    for n in range(4):
        history += [items.user(f"u{n}"), Message("assistant", f"a{n}")]
    turns = anthropic_messages(history)
    marked = [t["content"][-1]["text"] for t in turns if "cache_control" in t["content"][-1]]
    assert marked == ["u2", "u3"]


def test_anthropic_redacted_thinking_round_trips_and_foreign_reasoning_is_dropped():
    redacted = _Block("redacted_thinking", data="OPAQUE").item()
    assert redacted == Reasoning("", id=REDACTED_THINKING_ID, encrypted_content="OPAQUE")
    turns = anthropic_messages(
        [
            items.user("q"),
            redacted,
            Reasoning("openai", id="rs_1", encrypted_content="E"),
            ToolCall("t1", "shell", '{"a": 1}'),
        ]
    )
    assert turns[1]["content"] == [
        {"type": "redacted_thinking", "data": "OPAQUE"},
        {"type": "tool_use", "id": "t1", "name": "shell", "input": {"a": 1}},
    ]


def test_anthropic_tool_use_without_streamed_json_keeps_its_start_input():
    block = _Block("tool_use", call_id="t", name="n", initial_input={"path": "a"})
    assert block.item() == ToolCall("t", "n", '{"path": "a"}')
