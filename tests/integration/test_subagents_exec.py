"""Subagents through `agent exec`: progress lines, the --json subagent item, an agent file in
Claude Code's format (its tool names and model alias) on the Anthropic wire format."""

from __future__ import annotations

import json

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall

AGENT_FILE = """---
name: reader
description: Reads files and reports what they say.
tools: Read, Glob, NotebookEdit
model: sonnet
---
Read what you are asked about and quote it.
"""


def script_one_child(server) -> None:
    server.script(
        Reply(
            tool_calls=[
                ToolCall("task", {"agent": "reader", "description": "read the notes", "prompt": "read notes.txt"})
            ]
        ),
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="notes.txt says hello"),
        Reply(text="The notes say hello."),
    )


def write_repo(tmp_path):
    (tmp_path / ".agent" / "agents").mkdir(parents=True)
    (tmp_path / ".agent" / "agents" / "reader.md").write_text(AGENT_FILE)
    (tmp_path / "notes.txt").write_text("hello\n")


def test_exec_json_reports_a_subagent_item_and_maps_claude_names(server, tmp_path):
    write_repo(tmp_path)
    script_one_child(server)
    result = run_agent(
        ["exec", "--provider", "anthropic", "-m", "claude-test", "--json", "go"],
        cwd=tmp_path,
        env=provider_env(server, "anthropic"),
    )
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines()]
    subagent = [line for line in lines if line.get("item", {}).get("type") == "subagent"]
    started, completed = subagent
    assert started["type"] == "item.started" and started["item"]["status"] == "in_progress"
    item = completed["item"]
    assert completed["type"] == "item.completed" and item["id"] == started["item"]["id"]
    assert (item["agent"], item["description"], item["status"]) == ("reader", "read the notes", "completed")
    assert item["final_message"] == "notes.txt says hello" and item["usage"]["input_tokens"] > 0
    assert not [
        line for line in lines if line.get("item", {}).get("type") == "tool_call"
    ]  # no second item for the call
    warnings = [line["item"]["message"] for line in lines if line.get("item", {}).get("type") == "error"]
    assert warnings == [
        f"agent file {tmp_path / '.agent/agents/reader.md'}: tools with no equivalent here are ignored: NotebookEdit"
    ]

    child = server.requests[1].body
    assert child["model"] == "claude-sonnet-4-5"  # `sonnet` on the Anthropic provider
    assert [tool["name"] for tool in child["tools"]] == ["read_file", "grep"]
    assert "Read what you are asked about" in json.dumps(child["system"])
    assert lines[-1]["type"] == "turn.completed"
    total = lines[-1]["usage"]["input_tokens"]
    assert total == sum(request.input_tokens for request in server.requests)  # the child's tokens count too


def test_exec_progress_lines_carry_the_agents_name(server, tmp_path):
    write_repo(tmp_path)
    script_one_child(server)
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "m", "go"], cwd=tmp_path, env=provider_env(server, "openai-chat")
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The notes say hello.\n"
    assert "▶ task reader: read the notes" in result.stderr
    assert "[reader] ▶ read_file(path='notes.txt')" in result.stderr
    assert "[reader] agent\n[reader] notes.txt says hello" in result.stderr
    assert server.requests[1].body["model"] == "m"  # `sonnet` means inherit off Anthropic
