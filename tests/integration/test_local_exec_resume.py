"""A multi-turn `agent exec` / `agent exec resume` job against a small local server: a window of
8,192 tokens and a tokenizer that counts 2.5x what bytes/4 says (as llama.cpp with some models).
The conversation outgrows the window several times; every turn must finish."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import provider_env, run_agent
from tests.fake_server import FakeModelServer, Reply, ToolCall
from tests.fake_server.local_servers import llamacpp_overflow_body, llamacpp_routes

WINDOW = 8192
COMPACT_MARK = "Your context window is about to be reset"
FILES_PER_TURN = 2
TURNS = 3  # the first `agent exec`, then two `agent exec resume --last`


def is_summary_request(rec) -> bool:
    return COMPACT_MARK in str(rec.body["messages"][-1].get("content"))


class Notes:
    """The scripted model: each turn reads the next two notes files, one per response, then
    answers with the turn's number; asked to summarize, it says how far the job got."""

    def __init__(self) -> None:
        self.read = 0
        self.turn = 0  # set by the test before each run

    def __call__(self, rec) -> Reply:
        if is_summary_request(rec):
            return Reply(text=f"## Task\nRead the notes files two per turn. Read so far: {self.read}.")
        if self.read < self.turn * FILES_PER_TURN:
            self.read += 1
            return Reply(tool_calls=[ToolCall("read_file", {"path": f"notes{self.read}.txt"})])
        return Reply(text=f"turn {self.turn} done: {self.read} files read")


def test_every_turn_finishes_on_a_small_window_with_a_hungry_tokenizer(tmp_path: Path, isolated_home):
    repo = tmp_path / "repo"
    repo.mkdir()
    for n in range(1, TURNS * FILES_PER_TURN + 1):  # ~1,000 of the server's tokens each
        (repo / f"notes{n}.txt").write_text("".join(f"note {n}.{i}: keep the build green\n" for i in range(50)))
    model = Notes()
    with FakeModelServer(
        context_window=WINDOW,
        token_scale=2.5,
        overflow_body=llamacpp_overflow_body,
        routes=llamacpp_routes(WINDOW),
        fallback=model,
    ) as server:
        env = provider_env(server, "openai-chat")
        common = ["--provider", "openai-chat", "-m", "qwen2.5-coder:7b", "--mode", "ask", "--json"]
        results = []
        for turn in range(1, TURNS + 1):
            model.turn = turn
            args = ["exec", *common] if turn == 1 else ["exec", "resume", "--last", *common]
            prompt = "Read the notes files, two per turn." if turn == 1 else "Next two, please."
            results.append(run_agent([*args, prompt], cwd=repo, env=env))

    compactions = []
    for turn, result in enumerate(results, 1):
        assert result.returncode == 0, result.stderr
        events = [json.loads(line) for line in result.stdout.splitlines()]
        items = [e["item"] for e in events if e["type"] == "item.completed"]
        messages = [item["text"] for item in items if item["type"] == "agent_message"]
        assert messages[-1] == f"turn {turn} done: {turn * FILES_PER_TURN} files read"
        assert events[-1]["type"] == "turn.completed"
        compactions += [item for item in items if item["type"] == "compaction" and item["applied"]]
    # The window is learned as 8k, so the lean profile applies (the full prompt and tools alone
    # would not fit at 2.5x); each file still fills much of what is left: the conversation
    # outgrew the window again and again, and went on every time.
    assert len(compactions) >= TURNS - 1
    assert all(rec.input_tokens <= WINDOW for rec in server.requests if not rec.overflowed)
