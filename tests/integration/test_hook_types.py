"""The hook types besides ``command``: ``http`` (a real local server) and ``prompt`` (the fake model)."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from tests import session_helpers
from tests.fake_server import Reply, ToolCall


class HookServer:
    """A policy server: records each POST, answers with ``answer(body)`` (status, JSON or None)."""

    def __init__(self, answer):
        self.received: list[tuple[dict, dict]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.received.append((body, dict(self.headers)))
                status, reply = answer(body)
                data = b"" if reply is None else json.dumps(reply).encode()
                self.send_response(status)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/hook"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def policy_server():
    servers = []

    def start(answer):
        servers.append(HookServer(answer))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def settings(repo: Path, hooks: dict) -> None:
    (repo / ".claude").mkdir(exist_ok=True)
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks}))


async def run(session, text: str) -> list[ev.Event]:
    return [event async for event in submit(session, text)]


async def test_an_http_hook_reaches_a_local_server_and_blocks_a_call(server, policy_server, tmp_path, monkeypatch):
    def answer(body):
        if "rm " in body["tool_input"].get("command", ""):
            return 200, {"decision": "block", "reason": "the policy server says no"}
        return 200, None  # an empty 2xx: nothing to say

    policy = policy_server(answer)
    monkeypatch.setenv("HOOK_TOKEN", "s3cret")
    monkeypatch.setenv("OTHER_SECRET", "never-sent")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "keep.txt").write_text("x")
    hook = {
        "type": "http",
        "url": policy.url,
        "headers": {"Authorization": "Bearer $HOOK_TOKEN", "X-Other": "${OTHER_SECRET}"},
        "allowedEnvVars": ["HOOK_TOKEN"],
    }
    settings(repo, {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]})
    session = session_helpers.make_session(
        server,
        repo,
        monkeypatch,
        'sandbox_mode="danger-full-access"',
        'approval_policy="never"',
        "shell_environment_policy.keep=['HOOK_TOKEN']",
    )
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "echo fine"}), ToolCall("shell", {"command": "rm keep.txt"})]),
        Reply(text="done"),
    )
    events = await run(session, "go")
    await session.aclose()
    ends = [event for event in events if isinstance(event, ev.ToolCallEnd)]
    assert ends[0].success and "fine" in ends[0].output
    assert not ends[1].success and "the policy server says no" in ends[1].output
    assert (repo / "keep.txt").exists()
    assert [body["tool_input"]["command"] for body, _ in policy.received] == ["echo fine", "rm keep.txt"]
    body, headers = policy.received[0]
    assert body["hook_event_name"] == "PreToolUse" and body["tool_name"] == "Bash"
    assert headers["Authorization"] == "Bearer s3cret"
    assert headers["X-Other"] == ""  # not listed in allowedEnvVars


async def test_an_http_hook_error_status_blocks_nothing_and_is_shown(server, policy_server, tmp_path, monkeypatch):
    policy = policy_server(lambda body: (500, {"oops": True}))
    repo = tmp_path / "repo"
    repo.mkdir()
    settings(repo, {"UserPromptSubmit": [{"hooks": [{"type": "http", "url": policy.url}]}]})
    session = session_helpers.make_session(server, repo, monkeypatch)
    server.script(Reply(text="answered"))
    events = await run(session, "hello")
    await session.aclose()
    assert isinstance(events[-1], ev.TurnComplete)
    assert any(isinstance(e, ev.Warning) and "failed with exit code 1: HTTP 500" in e.message for e in events)


async def test_an_http_hook_to_a_private_address_is_refused(server, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    settings(repo, {"UserPromptSubmit": [{"hooks": [{"type": "http", "url": "http://169.254.169.254/latest"}]}]})
    session = session_helpers.make_session(server, repo, monkeypatch)
    server.script(Reply(text="answered"))
    events = await run(session, "hello")
    await session.aclose()
    warnings = [e.message for e in events if isinstance(e, ev.Warning)]
    assert any("could not be started" in w and "169.254.169.254" in w and "link-local" in w for w in warnings)


async def test_a_prompt_hook_asks_the_model_and_its_no_blocks(server, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    hook = {"type": "prompt", "prompt": "Refuse prompts about Fridays. Event: $ARGUMENTS"}
    settings(repo, {"UserPromptSubmit": [{"hooks": [hook]}]})
    session = session_helpers.make_session(server, repo, monkeypatch)
    server.script(Reply(text='{"ok": false, "reason": "no Friday work"}'))
    events = await run(session, "plan the Friday release")
    await session.aclose()
    (request,) = server.requests  # the hook's; the prompt itself was never sent
    sent = request.body["messages"][-1]["content"]
    assert sent.startswith("Refuse prompts about Fridays. Event: {")
    assert '"prompt": "plan the Friday release"' in sent
    assert "request.body" not in json.dumps(request.body.get("tools", []))
    assert any(isinstance(e, ev.Warning) and "no Friday work" in e.message for e in events)
    assert isinstance(events[-1], ev.TurnAborted)


async def test_an_async_hook_decides_nothing_and_ends_with_the_session(server, tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    repo.mkdir()
    done = tmp_path / "async-done"
    slow = {"type": "command", "command": f"sleep 0.5; touch {done}; exit 2", "async": True, "statusMessage": "x"}
    settings(repo, {"PreToolUse": [{"matcher": "Bash", "hooks": [slow]}]})
    session = session_helpers.make_session(
        server, repo, monkeypatch, 'sandbox_mode="danger-full-access"', 'approval_policy="never"'
    )
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo ran"})]), Reply(text="done"))
    events = await run(session, "go")
    (end,) = [event for event in events if isinstance(event, ev.ToolCallEnd)]
    assert end.success and "ran" in end.output  # its exit 2 blocked nothing
    assert not session.take_load_warnings()  # async and statusMessage are Claude's keys: accepted
    await session.aclose()
    assert done.exists()  # the session waited for it before closing
