"""What a server says is checked before it is believed (issue 27, item 12): usage figures that
cannot be true are ignored with a warning and never stop a compaction; a redirect is named.
Real `agent exec` processes against the fake server (and a redirecting one) over HTTP."""

from __future__ import annotations

import http.server
import threading
from pathlib import Path

import pytest

from tests.conftest import provider_env, run_agent
from tests.fake_server import FakeModelServer, Reply, ToolCall
from tests.fake_server.script import Usage

WINDOW = 18_000  # auto-compaction near 14,500 tokens: the third ~4,000-token file crosses it
COMPACT_MARK = "Your context window is about to be reset"


class ReadFiles:
    """The scripted model: read one file per step reporting ``usage``; summarize when asked."""

    def __init__(self, files: int, usage: Usage):
        self.files, self.usage, self.step = files, usage, 0

    def __call__(self, rec) -> Reply:
        last = rec.body["messages"][-1]["content"]
        if isinstance(last, str) and COMPACT_MARK in last:
            return Reply(text=f"## Active task\nRead the data files. Done: {self.step}.")
        if self.step < self.files:
            self.step += 1
            return Reply(tool_calls=[ToolCall("read_file", {"path": f"data{self.step}.txt"})], usage=self.usage)
        return Reply(text=f"finished after {self.step} files", usage=self.usage)


@pytest.mark.parametrize(
    ("reported", "warned"),
    [
        (Usage(input_tokens=-5), "input_tokens is negative"),
        (Usage(input_tokens=10**15), "input_tokens is 1,000,000,000,000,000, more than any model's window"),
        (Usage(input_tokens=100), None),  # plausible but far below what was sent: not believed either
        (Usage(input_tokens=0), None),  # a server that counts nothing
    ],
)
def test_bad_usage_reports_never_keep_compaction_from_starting(tmp_path: Path, reported, warned):
    for i in range(1, 6):
        lines = "".join(f"record {n:03d} of data{i}: " + "lorem ipsum dolor sit amet " * 2 + "\n" for n in range(200))
        (tmp_path / f"data{i}.txt").write_text(lines)
    with FakeModelServer(context_window=WINDOW, fallback=ReadFiles(5, reported)) as server:
        result = run_agent(
            [
                "exec",
                "--provider",
                "openai-chat",
                "-m",
                "test-model",
                "-c",
                f"model_context_window={WINDOW}",
                "read data1..5 in order",
            ],
            cwd=tmp_path,
            env=provider_env(server, "openai-chat"),
            timeout=120,
        )
        overflowed = [rec for rec in server.requests if rec.overflowed]
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "finished after 5 files"
    assert "compacting the conversation (auto)" in result.stderr
    assert not overflowed  # compaction came in time: the server never had to refuse a request
    if warned:
        assert result.stderr.count(f"ignored the server's token usage report: {warned}") == 1  # once


class Redirecting(http.server.BaseHTTPRequestHandler):
    def do_POST(self):  # noqa: N802 - the standard library's name
        self.send_response(307)
        self.send_header("Location", "https://elsewhere.example/v1/chat/completions")
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture
def redirecting_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Redirecting)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_a_redirect_is_named_in_the_error(redirecting_server, tmp_path):
    env = {"OPENAI_BASE_URL": redirecting_server, "OPENAI_API_KEY": "test-key"}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "m", "hi"], cwd=tmp_path, env=env, timeout=60)
    assert result.returncode == 1
    assert "answered with a redirect (HTTP 307) to https://elsewhere.example/v1/chat/completions" in result.stderr
    assert "does not follow redirects" in result.stderr
