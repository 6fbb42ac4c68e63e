"""The lean profile's choices, shortening a summarizing request's newest outputs, and what a
compaction dropped: pure functions."""

from __future__ import annotations

import json

from agent_cli.context.dropped import dropped_items, render_dropped
from agent_cli.context.profile import LEAN_TOOLS, behind_search, is_lean, lean_spec, offered_directly
from agent_cli.context.prompts import prompt_library
from agent_cli.context.tokens import tool_output_limit
from agent_cli.items import ToolCall, ToolOutput, assistant, user
from agent_cli.memory.tools import memory_tools
from agent_cli.session.compaction_plan import shorten_newest_outputs
from agent_cli.tools import default_tools


def test_lean_applies_up_to_8k_unless_the_config_says_otherwise():
    assert is_lean("auto", 8_192) and is_lean("auto", 2_048) and not is_lean("auto", 8_193)
    assert is_lean("lean", 200_000) and not is_lean("full", 4_096)


def test_which_tools_are_offered_behind_the_pair_or_left_out():
    assert all(
        offered_directly(name) for name in ("shell", "read_file", "apply_patch", "grep", "tool_search", "tool_call")
    )
    assert all(behind_search(name) for name in ("memory_save", "memory_search", "task", "mcp__github__create_issue"))
    assert not any(
        offered_directly(name) or behind_search(name)
        for name in ("list_dir", "update_plan", "shell_output", "shell_kill", "web_fetch", "mcp_call")
    )


def test_lean_specs_are_terse_and_keep_only_their_parameters():
    library = prompt_library()
    for tool in default_tools() + memory_tools():
        if tool.name not in LEAN_TOOLS:
            continue
        spec = lean_spec(tool.spec, library)
        assert set(spec.parameters["properties"]) <= set(LEAN_TOOLS[tool.name])
        assert set(spec.parameters.get("required", [])) <= set(spec.parameters["properties"])
        assert "description" not in json.dumps(spec.parameters)
        full = len(tool.spec.description) + len(json.dumps(tool.spec.parameters))
        assert len(spec.description) + len(json.dumps(spec.parameters)) < full * 0.7
    patch = lean_spec(next(t for t in default_tools() if t.name == "apply_patch").spec, library)
    assert "*** Begin Patch" in patch.description and "*** End Patch" in patch.description


def test_tool_output_limit_is_an_eighth_of_a_small_window_unless_set():
    assert tool_output_limit(10_000, 200_000, explicit=False) == 10_000
    assert tool_output_limit(10_000, 16_000, explicit=False) == 16_000 * 95 // 100 // 8
    assert tool_output_limit(10_000, 2_048, explicit=False) == 256
    assert tool_output_limit(10_000, 16_000, explicit=True) == 10_000


def test_shortening_touches_only_outputs_after_the_cached_prefix():
    items = [
        user("task"),
        ToolCall("a", "read_file", "{}"),
        ToolOutput("a", "x" * 4000),
        ToolCall("b", "read_file", "{}"),
        ToolOutput("b", "y" * 8000),
    ]
    tokens = [5, 5, 1000, 5, 2000]
    kept, counts, shortened = shorten_newest_outputs(items, tokens, 3, 1500)
    assert kept[:3] == items[:3] and counts[:3] == tokens[:3]
    assert shortened == 1 and counts[4] == 500 and len(kept[4].output) < 2500 and "truncated" in kept[4].output
    _, _, none = shorten_newest_outputs(items, tokens, 5, 1500)
    assert none == 0


def test_dropped_items_name_files_commands_spill_files_and_messages():
    read = ToolCall("r", "read_file", json.dumps({"path": "src/app.py"}))
    run = ToolCall("s", "shell", json.dumps({"command": "pytest -q"}))
    big = ToolOutput("s", "Full output (9 bytes) saved to /tmp/out/s.txt; page it with read_file\n...")
    task = user("fix the bug")
    old = [task, read, ToolOutput("r", "code"), run, big, assistant("Fixed it.")]
    dropped = dropped_items(old, [task], lambda item: 10)
    assert [(d.kind, d.label, d.spill_file) for d in dropped] == [
        ("file", "src/app.py", None),
        ("output", "pytest -q", "/tmp/out/s.txt"),
        ("message", "assistant: Fixed it.", None),
    ]
    assert dropped[0].tokens == 20  # the call and its output
    text = render_dropped("## Active task\nfix", dropped)
    assert text.index("Files read:") < text.index("Tool outputs:") < text.index("Messages:")
    assert "full output: /tmp/out/s.txt" in text and "about 50 tokens" in text
