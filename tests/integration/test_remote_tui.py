"""The TUI on a session in a host (`agent --remote ws://...`): the same app, driven through the
app-server protocol against a real `agent app-server` process and the scripted model server.
A turn with a command the user approves in the app's own dialog, a turn another client starts
shown live (what is typed meanwhile waits for it), what only a session in this process can do
refused with the reason, and the mode chosen in the app reaching the model. Every message the
server sends is checked against Codex's schema (tests/app_server_helpers.py)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_cli.app_server.client import AppServerClient, thread_text
from agent_cli.config import load_config
from agent_cli.remote.conversation import RemoteConversation
from agent_cli.remote.host import connect_url
from agent_cli.tui.app import AgentApp
from agent_cli.tui.screens.approval import ApprovalScreen
from tests.app_server_helpers import TOKEN
from tests.conftest import git_init, run_agent
from tests.fake_server import Reply, ToolCall
from tests.tui.helpers import screen_text, type_text, wait_idle, wait_until

pytestmark = pytest.mark.timeout(180)
RELEASE = "while [ ! -e go ]; do sleep 0.05; done; echo released"  # a command that waits for the test
SIZE = (110, 40)


@pytest.fixture
def repo(tmp_path) -> Path:
    return git_init(tmp_path / "repo")


@pytest.fixture
def host(app_servers, repo, tmp_path):
    """A real `agent app-server` on a WebSocket with a token."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    token_file.chmod(0o600)
    return app_servers(
        repo, "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token", "--ws-token-file", str(token_file)
    )


def words_shown(app: AgentApp) -> str:
    """The screen's words in one line: a notice wraps where the terminal's width says."""
    return " ".join(word for word in screen_text(app).split() if word not in ("▌", "│"))


async def hosted_app(url: str, repo: Path, **params: str) -> AgentApp:
    """What `agent --remote URL` opens: a new session in the host, in ``repo``."""
    remote = await RemoteConversation.start(await connect_url(url, TOKEN), repo, dict(params))
    remote.url = url
    return AgentApp(load_config(repo, [], {}), remote=remote)


async def test_the_app_runs_a_turn_in_the_host_and_its_approval_is_answered_in_the_apps_dialog(server, repo, host):
    server.script(
        Reply(text="asking first", tool_calls=[ToolCall("shell", {"command": "touch approved.txt"})]),
        Reply(text="the file is there"),
    )
    app = await hosted_app(host.url, repo, approvalPolicy="untrusted")
    async with app.run_test(size=SIZE) as pilot:
        assert "test-model" in screen_text(app) and str(repo.name) in screen_text(app)  # the banner: the host's
        await type_text(pilot, "make the file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval dialog")
        await wait_until(pilot, lambda: app.screen.armed, what="the dialog to take keys")
        assert "touch approved.txt" in screen_text(app)
        assert not (repo / "approved.txt").exists()
        await pilot.press("y")
        await wait_idle(pilot, timeout=60)
        shown = screen_text(app)
        assert "the file is there" in shown and "touch approved.txt" in shown
        assert (repo / "approved.txt").exists()  # run by the host, once the app said yes
        assert "context left" in shown  # the status bar's count, from the host's token usage
        assert shown.count("make the file") == 1  # the prompt once, not again when the host echoes it


async def test_a_turn_another_client_starts_shows_live_and_what_is_typed_waits_for_it(server, repo, host):
    server.script(
        Reply(text="waiting for the go", tool_calls=[ToolCall("shell", {"command": RELEASE})]),
        Reply(text="released by the test"),
        Reply(text="the queued prompt's answer"),
    )
    app = await hosted_app(host.url, repo, approvalPolicy="never")
    async with app.run_test(size=SIZE) as pilot:
        assert app.remote is not None
        other = await AppServerClient.connect(host.url, token=TOKEN)
        await other.initialize("another-window")
        await other.request("thread/resume", {"threadId": app.remote.thread.id})
        await other.request("turn/start", {"threadId": app.remote.thread.id, "input": thread_text("from elsewhere")})
        await wait_until(pilot, lambda: "running" in screen_text(app) and app.busy, 30, "the other client's turn")
        assert "from elsewhere" in screen_text(app)
        await type_text(pilot, "typed meanwhile")
        await pilot.press("enter")
        await wait_until(pilot, lambda: list(app.queue) == ["typed meanwhile"], what="the prompt to wait")
        (repo / "go").touch()
        await wait_until(
            pilot, lambda: "the queued prompt's answer" in screen_text(app), 60, "the queued prompt's turn"
        )
        assert "released by the test" in screen_text(app)
        await other.close()
    assert [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "user"][-1].endswith(
        "typed meanwhile"
    )


async def test_what_only_a_session_in_this_process_can_do_is_refused_with_the_reason(server, repo, host):
    server.script(Reply(text="planned"))
    app = await hosted_app(host.url, repo)
    async with app.run_test(size=SIZE) as pilot:
        for typed in ("/diff", "!ls"):
            await type_text(pilot, typed)
            await pilot.press("enter")
        await wait_until(pilot, lambda: "/diff runs only where the session runs" in words_shown(app), what="/diff")
        await wait_until(pilot, lambda: "the app-server protocol carries none" in words_shown(app), what="!ls")
        assert not server.requests  # nothing reached the model
        await pilot.press("shift+tab")  # agent -> plan: the protocol's two modes
        await wait_until(pilot, lambda: app.status.mode == "plan", what="the status bar's mode")
        await type_text(pilot, "make a plan")
        await pilot.press("enter")
        await wait_idle(pilot, timeout=60)
    sent = str(server.requests[-1].body["messages"])
    assert "The user switched to plan mode" in sent  # the host switched before the turn it came with


def test_a_host_on_a_websocket_refuses_a_client_without_its_token(repo, host):
    missing = run_agent(["--remote", host.url], cwd=repo)
    assert missing.returncode == 2
    assert "refused the connection (401)" in missing.stderr and "--remote-auth-token-env" in missing.stderr
    wrong = run_agent(
        ["--remote", host.url, "--remote-auth-token-env", "HOST_TOKEN"], cwd=repo, env={"HOST_TOKEN": "not-it"}
    )
    assert wrong.returncode == 2 and "(401)" in wrong.stderr
    unset = run_agent(["--remote", host.url, "--remote-auth-token-env", "NOT_SET_ANYWHERE"], cwd=repo)
    assert unset.returncode == 2 and "NOT_SET_ANYWHERE is empty or not set" in unset.stderr
    assert "NOT_SET_ANYWHERE" not in os.environ


async def test_an_approval_answered_in_another_window_closes_the_apps_dialog(server, repo, host):
    server.script(
        Reply(text="asking", tool_calls=[ToolCall("shell", {"command": f"touch approved.txt; {RELEASE}"})]),
        Reply(text="approved elsewhere"),
    )
    app = await hosted_app(host.url, repo, approvalPolicy="untrusted")
    async with app.run_test(size=SIZE) as pilot:
        assert app.remote is not None
        other = await AppServerClient.connect(host.url, token=TOKEN)
        await other.initialize("another-window")
        await other.request("thread/resume", {"threadId": app.remote.thread.id})
        await type_text(pilot, "make the file")
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.screen, ApprovalScreen), what="the approval dialog")
        asked = await other.server_request()
        await other.respond(asked, {"decision": "accept"})
        await wait_until(pilot, lambda: (repo / "approved.txt").exists(), 30, "the approved command to run")
        await wait_until(pilot, lambda: not isinstance(app.screen, ApprovalScreen), 30, "the dialog to close")
        assert app.busy  # closed by the other window's answer, not by the turn's end
        (repo / "go").touch()
        await wait_idle(pilot, timeout=60)
        assert "approved elsewhere" in screen_text(app) and (repo / "approved.txt").exists()
        await other.close()
