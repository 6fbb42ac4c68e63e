"""A Chat Completions refusal (`delta.refusal`) through `agent exec`: its own item and stop reason in
--json, a refusal on stderr and no answer on stdout in text mode (the SDK keeps it apart from the
content too)."""

from __future__ import annotations

import json

from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply
from tests.integration.test_stream_faults import chunk

REFUSAL = Reply.raw(
    [
        chunk({"role": "assistant", "refusal": "I can't help "}),
        chunk({"refusal": "with that."}, finish="stop"),
        "[DONE]",
    ]
)
EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model", "--skip-git-repo-check"]


def test_json_reports_a_refusal_item_and_stop_reason(server, tmp_path):
    server.script(REFUSAL)
    result = run_agent([*EXEC, "--json", "do the thing"], cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    items = [event["item"] for event in events if event["type"] == "item.completed"]
    assert [item["type"] for item in items] == ["refusal"]
    assert items[0]["text"] == "I can't help with that."
    [done] = [event for event in events if event["type"] == "turn.completed"]
    assert done["stop_reason"] == "refusal"


def test_text_mode_prints_no_answer_and_says_it_was_a_refusal(server, tmp_path):
    server.script(REFUSAL)
    answer = tmp_path / "last.txt"
    result = run_agent(
        [*EXEC, "-o", str(answer), "do the thing"], cwd=tmp_path, env=provider_env(server, "openai-chat")
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "refusal" in result.stderr and "I can't help with that." in result.stderr
    assert answer.read_text() == ""
