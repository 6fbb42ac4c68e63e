"""No terminal control sequence of a model, a file or a command reaches the terminal (issue 27,
item 6): real `agent exec` processes against the fake server, stdout and stderr both."""

from __future__ import annotations

import json

import pytest

from agent_cli.terminal_text import terminal_safe
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall

TITLE = "\x1b]0;pwned title\x07"
CLIPBOARD = "\x1b]52;c;ZWNobyBybSAtcmYgfg==\x1b\\"
LINK = "\x1b]8;;https://evil.example\x1b\\click\x1b]8;;\x1b\\"
CLEAR = "\x1b[2J\x1b[H"
HOSTILE = f"start {TITLE}{CLIPBOARD}{LINK}{CLEAR}\x1b[31mred\x1b[0m end"


def exec_agent(server, cwd, *args: str):
    return run_agent(
        ["exec", "--provider", "openai-chat", "-m", "m", *args], cwd=cwd, env=provider_env(server, "openai-chat")
    )


def test_exec_prints_no_control_sequence_from_the_answer_a_file_or_a_command(server, tmp_path):
    (tmp_path / "notes.txt").write_text(f"file says {HOSTILE}\n")
    server.script(
        Reply(
            text=f"thinking aloud {TITLE}",
            tool_calls=[
                ToolCall("read_file", {"path": "notes.txt"}),
                ToolCall("shell", {"command": "printf 'cmd says \\033]52;c;aGk=\\007 and \\033[2J done\\n'"}),
            ],
        ),
        Reply(text=f"answer {HOSTILE}"),
    )
    result = exec_agent(server, tmp_path, "go")
    assert result.returncode == 0, result.stderr
    for stream in (result.stdout, result.stderr):
        assert "\x1b" not in stream and "\x07" not in stream and "\x9b" not in stream
    assert result.stdout == "answer start clickred end\n"  # the words stay, the sequences go
    assert "file says start" in result.stderr and "cmd says" in result.stderr


def test_json_mode_keeps_the_text_and_escapes_it(server, tmp_path):
    server.script(Reply(text=f"answer {CLEAR}"))
    result = exec_agent(server, tmp_path, "--json", "go")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout
    texts = [json.loads(line).get("item", {}).get("text") for line in result.stdout.splitlines()]
    assert f"answer {CLEAR}" in texts  # the exact text, JSON-escaped on the wire


@pytest.mark.parametrize(
    ("raw", "shown"),
    [
        ("a\x1b]0;title\x07b", "ab"),
        ("a\x1b]52;c;aGk=\x1b\\b", "ab"),
        ("a\x1b[2Jb", "ab"),
        ("a\x1b[38;5;196mb\x1b[0m", "ab"),
        ("a\x1bcb", "ab"),  # full reset
        ("a\x9b2Jb", "ab"),  # the 8-bit CSI
        ("bell\x07 back\x08space", "bell^G back^Hspace"),
        ("over\rwrite", "over\nwrite"),
        ("line\r\nnext\tcol", "line\nnext\tcol"),
        ("a lone \x1b", "a lone ^["),
        ("plain text ünïcode", "plain text ünïcode"),
        # Bidirectional overrides reorder what an approval question shows ("Trojan Source"): visible.
        ("rm -rf ~ #\u202e txt.elif\u202c", "rm -rf ~ #<U+202E> txt.elif<U+202C>"),
        ("a\u2067b\u2069\u200fc", "a<U+2067>b<U+2069><U+200F>c"),
        ("שלום עולם", "שלום עולם"),  # right-to-left text itself is left alone
    ],
)
def test_terminal_safe(raw, shown):
    assert terminal_safe(raw) == shown


def test_the_session_list_shows_a_prompt_without_its_escape_sequences(server, tmp_path):
    server.script(Reply(text="ok"))
    assert exec_agent(server, tmp_path, f"look {TITLE}{CLEAR}here").returncode == 0
    listed = run_agent(["sessions"], cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "look here" in listed.stdout and "\x1b" not in listed.stdout and "\x07" not in listed.stdout
