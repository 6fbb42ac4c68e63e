"""Reasoning and tool calls that local models leave in the answer text (models/chat_text.py)."""

from __future__ import annotations

import json

import pytest

from agent_cli.models.chat_text import ContentSplitter, Split, parse_tool_calls, whole_answer_calls

TOOLS = {"shell", "read_file"}


def split_all(deltas: list[str]) -> tuple[Split, list[str]]:
    splitter, out = ContentSplitter(), Split()
    for delta in [*deltas, None]:
        part = splitter.finish() if delta is None else splitter.feed(delta)
        out.text += part.text
        out.reasoning += part.reasoning
    return out, splitter.markup


def chars(text: str) -> list[str]:
    return list(text)  # the worst case: every marker arrives cut into single characters


THINKING = "<think>plan it</think>\n\nThe answer."


@pytest.mark.parametrize("deltas", [[THINKING], chars(THINKING)])
def test_think_block_becomes_reasoning_whatever_the_chunking(deltas):
    out, markup = split_all(deltas)
    assert out.reasoning == "plan it"
    assert out.text == "The answer."
    assert markup == []


def test_text_that_only_looks_like_a_marker_is_kept():
    out, markup = split_all(chars("a < b and <thin ice> [TOOL] x"))
    assert out.text == "a < b and <thin ice> [TOOL] x" and out.reasoning == "" and markup == []


def test_unclosed_think_is_reasoning_to_the_end():
    out, _ = split_all(["<think>still thinking"])
    assert out.reasoning == "still thinking" and out.text == ""


def test_hermes_tool_call_is_held_back_and_parsed():
    text = 'Let me look.\n<tool_call>\n{"name": "shell", "arguments": {"command": "ls -la"}}\n</tool_call>'
    out, markup = split_all(chars(text))
    assert out.text == "Let me look.\n"
    calls = parse_tool_calls(markup[0], TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("shell", {"command": "ls -la"})]


@pytest.mark.parametrize(
    "content, expected",
    [
        (
            '[TOOL_CALLS][{"name": "shell", "arguments": {"command": "pwd"}}, '
            '{"name": "read_file", "arguments": {"path": "a"}}]',
            [("shell", {"command": "pwd"}), ("read_file", {"path": "a"})],
        ),
        ('[TOOL_CALLS]shell[ARGS]{"command": "pwd"}', [("shell", {"command": "pwd"})]),
        (
            '<|python_tag|>{"name": "shell", "parameters": {"command": "date"}}<|eom_id|>',
            [("shell", {"command": "date"})],
        ),
        ('<function=read_file>{"path": "setup.py"}</function>', [("read_file", {"path": "setup.py"})]),
        (
            '<tool_call>\n<function=shell>\n<parameter=command>\ngrep -rn "x" .\n</parameter>\n<parameter=timeout_ms>\n5000\n'
            "</parameter>\n</function>\n</tool_call>",
            [("shell", {"command": 'grep -rn "x" .', "timeout_ms": 5000})],
        ),
    ],
)
def test_template_markup_of_common_models(content, expected):
    out, markup = split_all([content])
    assert out.text == ""
    calls = [call for block in markup for call in parse_tool_calls(block, TOOLS)]
    assert [(c.name, json.loads(c.arguments)) for c in calls] == expected


def test_unknown_tool_or_broken_markup_is_not_a_call():
    assert parse_tool_calls('<tool_call>{"name": "rm_rf", "arguments": {}}</tool_call>', TOOLS) is None
    assert parse_tool_calls("<tool_call>not json</tool_call>", TOOLS) is None


def test_an_answer_that_is_only_json_call():
    calls = whole_answer_calls('{"name": "shell", "parameters": {"command": "ls"}}', TOOLS)
    assert [(c.name, json.loads(c.arguments)) for c in calls] == [("shell", {"command": "ls"})]
    assert whole_answer_calls('{"name": "Alice", "age": 3}', TOOLS) is None
    assert whole_answer_calls("Use {braces} like this.", TOOLS) is None
