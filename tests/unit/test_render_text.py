"""agent exec's text output: what repeats and what does not."""

from __future__ import annotations

import io

from agent_cli import events as ev
from agent_cli.headless.render_text import TextRenderer
from agent_cli.models.base import Usage


def count(used: int, total_in: int) -> ev.TokenCount:
    return ev.TokenCount(Usage(), Usage(input_tokens=total_in), used, 100_000)


def test_a_token_line_is_printed_only_when_the_context_changed():
    out = io.StringIO()
    renderer = TextRenderer(out)
    # a subagent's responses update the session's totals, not the parent's context
    for event in (count(4_000, 4_000), count(4_000, 6_000), count(4_000, 8_000), count(4_200, 12_000)):
        renderer.render(event)
    lines = [line for line in out.getvalue().splitlines() if line.startswith("tokens:")]
    assert lines == [
        "tokens: 4,000 used of 100,000 (96% context left)",
        "tokens: 4,200 used of 100,000 (96% context left)",
    ]


def test_results_of_calls_run_together_name_their_call():
    out = io.StringIO()
    renderer = TextRenderer(out)
    renderer.render(ev.ToolCallBegin("a", "read_file", {"path": "a.csv"}))
    renderer.render(ev.ToolCallBegin("b", "read_file", {"path": "b.csv"}))
    renderer.render(ev.ToolCallEnd("b", "read_file", {"path": "b.csv"}, "B", True, 0.1))
    renderer.render(ev.ToolCallEnd("a", "read_file", {"path": "a.csv"}, "A", True, 0.2))
    renderer.render(ev.ToolCallBegin("c", "read_file", {"path": "c.csv"}))
    renderer.render(ev.ToolCallEnd("c", "read_file", {"path": "c.csv"}, "C", True, 0.1))
    assert out.getvalue().splitlines() == [
        "▶ read_file(path='a.csv')",
        "▶ read_file(path='b.csv')",
        "  ok in 0.1s · read_file(path='b.csv')",
        "  │ B",
        "  ok in 0.2s · read_file(path='a.csv')",
        "  │ A",
        "▶ read_file(path='c.csv')",
        "  ok in 0.1s",
        "  │ C",  # alone: its header is just above
    ]


def test_a_subagents_lone_call_is_not_named_while_the_task_call_runs():
    out = io.StringIO()
    renderer = TextRenderer(out)
    renderer.render(ev.ToolCallBegin("t", "task", {"agent": "explore", "description": "look"}))
    renderer.render(ev.SubagentEvent("t", "explore", ev.ToolCallBegin("r", "read_file", {"path": "a"})))
    renderer.render(ev.SubagentEvent("t", "explore", ev.ToolCallEnd("r", "read_file", {"path": "a"}, "A", True, 0.1)))
    assert out.getvalue().splitlines()[-2:] == ["[explore]   ok in 0.1s", "[explore]   │ A"]
