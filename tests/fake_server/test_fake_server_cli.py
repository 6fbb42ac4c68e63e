"""The CLI side of the fake server: default responder, script files, `python -m`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import openai

from tests.fake_server import Reply
from tests.fake_server.responder import default_responder, last_turn
from tests.fake_server.server import RecordedRequest


def _rec(protocol: str, body: dict) -> RecordedRequest:
    return RecordedRequest("POST", "/", {}, body, protocol)


def test_default_responder_rules():
    tool_out = {
        "responses": {"input": [{"type": "function_call_output", "call_id": "c", "output": "file.txt"}]},
        "chat": {"messages": [{"role": "tool", "tool_call_id": "c", "content": "file.txt"}]},
        "anthropic": {
            "messages": [
                {
                    "role": "user",
                    "content": [
                        {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": "file.txt"}]}
                    ],
                }
            ]
        },
    }
    for protocol, body in tool_out.items():
        assert last_turn(protocol, body) == ("tool", "file.txt")
        assert default_responder(_rec(protocol, body)).text.startswith("Done. The tool said:")
    run = default_responder(_rec("chat", {"messages": [{"role": "user", "content": "please\nrun: ls -la"}]}))
    assert run.tool_calls[0].name == "shell" and run.tool_calls[0].arguments == {"command": "ls -la"}
    echo = default_responder(_rec("responses", {"input": "hello"}))
    assert "You said: hello" in echo.text and "\n- " in echo.text and echo.text.startswith("#")


def test_reply_from_dict():
    r = Reply.from_dict({"text": "t", "tool_calls": [{"name": "shell", "arguments": {"command": "ls"}}]})
    assert r.tool_calls[0].arguments_json() == '{"command": "ls"}'
    assert Reply.from_dict({"error": {"status": 429, "retry_after": 1}}).retry_after == 1
    assert Reply.from_dict({"cut": {"after_events": 3}}).kind == "cut"
    assert Reply.from_dict({"context_length_exceeded": {"in_stream": True}}).in_stream


def test_cli_runs_script(tmp_path: Path):
    script = tmp_path / "s.json"
    script.write_text(json.dumps([{"text": "from script"}]))
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, "-m", "tests.fake_server", "--port", "0", "--script", str(script)],
        cwd=root,
        stdout=subprocess.PIPE,
        text=True,
    )
    client = None
    try:
        line = proc.stdout.readline()
        assert line.startswith("listening on http://127.0.0.1:")
        client = openai.OpenAI(base_url=line.split()[-1] + "/v1", api_key="x", max_retries=0, timeout=5)
        assert client.responses.create(model="m", input="a").output_text == "from script"
        assert "You said: b" in client.responses.create(model="m", input="b").output_text
    finally:
        if client is not None:
            client.close()
        proc.terminate()
        proc.wait(5)
        proc.stdout.close()
