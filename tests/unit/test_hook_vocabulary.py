"""Our tool calls in Claude Code's vocabulary, as plugin hooks see them; config hooks keep ours."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli.hooks.spec import HookSpec, hook_calls
from agent_cli.hooks.vocabulary import claude_views

CWD = Path("/work/project")
PATCH = """*** Begin Patch
*** Add File: docs/new.md
+hello
*** Update File: src/app.py
@@ def main():
-    return 1
+    return 2
*** Delete File: old.txt
*** End Patch"""


@pytest.mark.parametrize(
    "name, args, expected",
    [
        (
            "shell",
            {"command": "ls -la", "timeout_ms": 500, "workdir": "sub"},
            ("Bash", {"command": "ls -la", "timeout": 500}),
        ),
        (
            "read_file",
            {"path": "src/a.py", "offset": 3, "limit": 10},
            ("Read", {"file_path": "/work/project/src/a.py", "offset": 3, "limit": 10}),
        ),
        (
            "grep",
            {"pattern": "TODO", "path": "src", "include": "*.py"},
            ("Grep", {"pattern": "TODO", "path": "/work/project/src", "glob": "*.py"}),
        ),
        ("list_dir", {"path": "src/../lib"}, ("LS", {"path": "/work/project/lib"})),
        (
            "update_plan",
            {"plan": [{"step": "test", "status": "in_progress"}]},
            ("TodoWrite", {"todos": [{"content": "test", "status": "in_progress", "activeForm": "test"}]}),
        ),
        (
            "task",
            {"agent": "explore", "description": "look", "prompt": "find it"},
            ("Task", {"subagent_type": "explore", "description": "look", "prompt": "find it"}),
        ),
        ("mcp__db__query", {"sql": "select 1"}, ("mcp__db__query", {"sql": "select 1"})),
    ],
)
def test_one_call_one_view(name, args, expected):
    assert claude_views(name, args, CWD) == [expected]


def test_a_patch_is_one_write_or_edit_per_file():
    views = claude_views("apply_patch", {"patch": PATCH}, CWD)
    assert views == [
        ("Write", {"file_path": "/work/project/docs/new.md", "content": "hello\n"}),
        ("Edit", {"file_path": "/work/project/src/app.py", "old_string": "    return 1", "new_string": "    return 2"}),
        ("Edit", {"file_path": "/work/project/old.txt", "old_string": "", "new_string": "", "delete": True}),
    ]


def test_a_patch_that_does_not_parse_has_no_views():
    assert claude_views("apply_patch", {"patch": "not a patch"}, CWD) == []
    assert claude_views("apply_patch", {"raw": "{"}, CWD) == []


def test_plugin_hooks_match_claude_names_and_run_per_file_while_config_hooks_keep_ours():
    ours = HookSpec("PreToolUse", "ours", "apply_patch")
    edits = HookSpec("PreToolUse", "edits", "Edit|Write", claude_names=True)
    bash = HookSpec("PreToolUse", "bash", "Bash", claude_names=True)
    every = HookSpec("PreToolUse", "every", None, claude_names=True)
    table = {"PreToolUse": (ours, edits, bash, every)}
    fields = {"tool_name": "apply_patch", "tool_input": {"patch": PATCH}, "tool_use_id": "c1"}
    calls = hook_calls(table, "PreToolUse", fields, CWD)
    assert [(spec.command, own["tool_name"]) for spec, own in calls] == [
        ("ours", "apply_patch"),
        ("edits", "Write"),
        ("every", "Write"),
        ("edits", "Edit"),
        ("every", "Edit"),
        ("edits", "Edit"),
        ("every", "Edit"),
    ]
    assert calls[0][1] is fields  # config hooks see our own call unchanged
    assert calls[1][1]["tool_use_id"] == "c1"
    shell = hook_calls(table, "PreToolUse", {"tool_name": "shell", "tool_input": {"command": "ls"}}, CWD)
    assert [(spec.command, own["tool_input"]) for spec, own in shell] == [
        ("bash", {"command": "ls"}),
        ("every", {"command": "ls"}),
    ]


def test_non_tool_events_match_the_source():
    start = HookSpec("SessionStart", "start", "startup|resume", claude_names=True)
    table = {"SessionStart": (start,)}
    assert hook_calls(table, "SessionStart", {"source": "resume"}, CWD) == [(start, {"source": "resume"})]
    assert hook_calls(table, "SessionStart", {"source": "compact"}, CWD) == []
