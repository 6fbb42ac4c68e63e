"""`agent exec --json` against a golden file: every item type, in Codex's exec schema.

Regenerate after an intended change with `UPDATE_GOLDEN=1 pytest tests/integration/test_exec_golden.py`.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall, Usage

GOLDEN = Path(__file__).parent / "golden" / "exec_json.jsonl"
PATCH = "*** Begin Patch\n*** Add File: notes.txt\n+hello\n*** End Patch"
PLAN = {"plan": [{"step": "look", "status": "completed"}, {"step": "write", "status": "in_progress"}]}


def normalized(event: dict) -> dict:
    """Replace what differs from run to run (ids, timings, the login shell's own output)."""
    if "thread_id" in event:
        event["thread_id"] = "<thread>"
    item = event.get("item", {})
    if item.get("type") == "command_execution" and item.get("aggregated_output"):
        output = item["aggregated_output"]
        assert output.startswith("Exit code: 0\nWall time: ") and output.endswith("\na\nb\n"), output
        item["aggregated_output"] = "<Exit code: 0 … a\\nb>"
    if item.get("type") == "checkpoint_created":
        assert re.fullmatch(r"[0-9a-f]{40}", item["commit"])
        item["commit"] = "<commit>"
    if item.get("type") == "tool_call" and "output" in item:
        item["output"] = re.sub(r"/\S+", "<path>", item["output"])
    return event


def test_exec_json_matches_the_golden_file(server, tmp_path):
    (tmp_path / "readme.txt").write_text("one line\n")
    server.script(
        Reply(
            text="Looking.",
            tool_calls=[ToolCall("update_plan", PLAN), ToolCall("read_file", {"path": "readme.txt"})],
            usage=Usage(input_tokens=100, cached_input_tokens=0, output_tokens=10),
        ),
        Reply(
            tool_calls=[ToolCall("shell", {"command": "printf 'a\\nb\\n'"})],
            usage=Usage(input_tokens=200, cached_input_tokens=100, output_tokens=10),
        ),
        Reply(
            tool_calls=[ToolCall("apply_patch", {"patch": PATCH}), ToolCall("no_such_tool", {})],
            usage=Usage(input_tokens=300, cached_input_tokens=200, output_tokens=10),
        ),
        Reply(text="All done.", usage=Usage(input_tokens=400, cached_input_tokens=300, output_tokens=5)),
    )
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "m", "--json", "go"],
        cwd=tmp_path,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    events = [normalized(json.loads(line)) for line in result.stdout.splitlines()]
    text = "".join(json.dumps(event, sort_keys=True) + "\n" for event in events)
    if os.environ.get("UPDATE_GOLDEN"):
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()
    assert (tmp_path / "notes.txt").read_text() == "hello\n"
