"""Claude's command line (what `claude -p` scripts and the Claude Agent SDK pass) read onto ours."""

from __future__ import annotations

import pytest

from agent_cli.stream_json import flags
from agent_cli.stream_json.messages import claude_tool, our_arguments


def test_the_sdk_command_line_is_recognised_and_parsed():
    argv = [
        "--output-format", "stream-json", "--verbose", "--system-prompt", "", "--model", "gpt-5",
        "--permission-mode", "bypassPermissions", "--setting-sources=", "--resume=abc",
        "--max-turns", "3", "--allowedTools", "Bash(git log:*),Read", "--input-format", "stream-json",
    ]  # fmt: skip
    assert flags.wants_stream_json(argv)
    args = flags.parse_args(argv)
    assert (args.input_format, args.output_format, args.model, args.resume) == (
        "stream-json",
        "stream-json",
        "gpt-5",
        "abc",
    )
    assert args.max_turns == 3 and args.system_prompt == "" and args.setting_sources == ""
    assert flags.split_names(args.allowed_tools) == ["Bash(git log:*)", "Read"]


def test_other_command_lines_stay_with_the_tui_and_exec():
    assert not flags.wants_stream_json(["fix the --output-format flag"])
    assert not flags.wants_stream_json(["exec", "hello"])
    assert flags.wants_stream_json(["-p", "hello"]) and flags.wants_stream_json(["--output-format=json", "hi"])


def test_stream_json_input_needs_stream_json_output():
    with pytest.raises(SystemExit):
        flags.parse_args(["--input-format", "stream-json", "--output-format", "json"])


@pytest.mark.parametrize(
    ("mode", "prompt_tool", "expected"),
    [
        ("default", True, {"approval_policy": "untrusted"}),
        ("default", False, {"approval_policy": "never"}),
        ("plan", True, {"approval_policy": "untrusted", "mode": "plan"}),
        ("bypassPermissions", True, {"approval_policy": "never", "sandbox_mode": "danger-full-access"}),
        ("dontAsk", True, {"approval_policy": "never"}),
    ],
)
def test_permission_modes(mode, prompt_tool, expected):
    assert {k: v for k, v in flags.permission_flags(mode, prompt_tool).items() if k in expected} == expected


def test_claude_tool_names_become_ours():
    tools, unknown = flags.our_tools(["Bash", "Read", "Glob", "Edit", "Write", "mcp__calc__add", "NotebookEdit"])
    assert tools == ["shell", "read_file", "grep", "apply_patch", "mcp__calc__add"]
    assert unknown == ["NotebookEdit"]


def test_calls_shown_in_claudes_vocabulary_and_updated_input_mapped_back(tmp_path):
    name, view = claude_tool("shell", {"command": "ls", "timeout_ms": 5}, tmp_path)
    assert (name, view) == ("Bash", {"command": "ls", "timeout": 5})
    assert our_arguments("shell", {"command": "ls -la"}, {"command": "ls", "workdir": "x"}) == {
        "command": "ls -la",
        "workdir": "x",
    }
    assert claude_tool("read_file", {"path": "a.txt"}, tmp_path) == ("Read", {"file_path": str(tmp_path / "a.txt")})
    assert our_arguments("read_file", {"file_path": "/b.txt"}, {"path": "a.txt"}) == {"path": "/b.txt"}
    assert claude_tool("apply_patch", {"patch": "x"}, tmp_path) == ("apply_patch", {"patch": "x"})


def test_inline_json_or_a_file(tmp_path):
    (tmp_path / "s.json").write_text('{"a": 1}')
    assert flags.read_json_or_file('{"a": 1}', "--settings") == {"a": 1}
    assert flags.read_json_or_file(str(tmp_path / "s.json"), "--settings") == {"a": 1}
    with pytest.raises(ValueError, match="cannot read"):
        flags.read_json_or_file(str(tmp_path / "missing.json"), "--settings")
