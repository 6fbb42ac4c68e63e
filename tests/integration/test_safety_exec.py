"""Approvals and the sandbox end to end: `agent exec` as a subprocess, and an interactive Session
whose approval requests the test answers, both against the fake model server."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.config import load_config
from agent_cli.runtime import open_session
from agent_cli.sandbox.policy import detect_mechanism, working_mechanisms
from agent_cli.session.session import Session
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall

needs_mechanism = pytest.mark.skipif(
    detect_mechanism().name == "none", reason="no sandbox mechanism here (no working bubblewrap, no Landlock)"
)


def exec_args(*rest: str) -> list[str]:
    return ["exec", "--provider", "openai-chat", "-m", "test-model", *rest]


def tool_outputs(server) -> list[str]:
    """Every tool output the model was sent, in order (chat wire format)."""
    last = server.requests[-1].body["messages"]
    return [m["content"] for m in last if m["role"] == "tool"]


@pytest.fixture
def outside():
    """A folder outside the workspace and outside the temp dirs (which workspace-write allows)."""
    for base in ("/var/tmp", str(Path.home())):
        try:
            path = Path(tempfile.mkdtemp(prefix="agent-outside-", dir=base)).resolve()
        except OSError:
            continue
        if not path.is_relative_to(Path("/tmp").resolve()):
            yield path
            shutil.rmtree(path, ignore_errors=True)
            return
        shutil.rmtree(path, ignore_errors=True)
    pytest.skip("no writable folder outside the temp dirs")


CONNECT = "python3 -c \"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); print('CONNECTED')\""


@needs_mechanism
@pytest.mark.parametrize("mechanism", working_mechanisms())
def test_workspace_write_in_exec(server, tmp_path, outside, listener, mechanism):
    (tmp_path / ".git").mkdir()
    port = listener.getsockname()[1]
    server.script(
        Reply(
            tool_calls=[
                ToolCall("shell", {"command": "echo in > inside.txt && cat inside.txt"}),
                ToolCall("shell", {"command": f"echo out > {outside}/escaped.txt"}),
                ToolCall("shell", {"command": CONNECT.format(port=port)}),
                ToolCall("apply_patch", {"patch": "*** Begin Patch\n*** Add File: .git/config\n+x\n*** End Patch"}),
            ]
        ),
        Reply(text="done"),
    )
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    result = run_agent(exec_args("write things"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    inside, escaped, connect, git = tool_outputs(server)
    assert "Exit code: 0" in inside and (tmp_path / "inside.txt").read_text() == "in\n"
    assert "Exit code: 0" not in escaped and not (outside / "escaped.txt").exists()
    assert "Exit code: 0" not in connect and "CONNECTED" not in connect
    with pytest.raises(TimeoutError):
        listener.accept()
    assert "stays read-only" in git and not (tmp_path / ".git" / "config").exists()


@needs_mechanism
def test_network_access_config_opens_the_network(server, tmp_path, listener):
    port = listener.getsockname()[1]
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": CONNECT.format(port=port)})]), Reply(text="done"))
    result = run_agent(
        exec_args("-c", "network_access=true", "go"), cwd=tmp_path, env=provider_env(server, "openai-chat")
    )
    assert result.returncode == 0, result.stderr
    assert "CONNECTED" in tool_outputs(server)[0]


def test_secrets_are_absent_from_a_commands_environment(server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "env"})]), Reply(text="done"))
    secrets = {"DEPLOY_TOKEN": "tok-123", "DB_PASSWORD": "pw-456", "STRIPE_SECRET": "sec-789", "KEPT_TOKEN": "kept-1"}
    env = {**provider_env(server, "openai-chat"), **secrets, "HARMLESS_SETTING": "visible-1"}
    result = run_agent(exec_args("-c", 'shell_environment_policy.keep=["KEPT_TOKEN"]', "go"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    output = tool_outputs(server)[0]
    for value in ("tok-123", "pw-456", "sec-789", "test-key"):  # test-key is OPENAI_API_KEY's value
        assert value not in output
    assert "HARMLESS_SETTING=visible-1" in output and "KEPT_TOKEN=kept-1" in output and "PATH=" in output


def test_untrusted_exec_denies_and_the_model_reads_why(server, tmp_path):
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch made.txt"}), ToolCall("shell", {"command": "ls"})]),
        Reply(text="ok"),
    )
    result = run_agent(exec_args("-a", "untrusted", "go"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    denied, listed = tool_outputs(server)
    assert "was not run" in denied and "cannot ask" in denied
    assert not (tmp_path / "made.txt").exists()
    assert "Exit code: 0" in listed


def test_exec_refuses_escalation_and_a_symlink_escape_in_apply_patch(server, tmp_path, outside):
    (tmp_path / "link").symlink_to(outside)
    patch = "*** Begin Patch\n*** Add File: link/evil.txt\n+x\n*** End Patch"
    server.script(
        Reply(
            tool_calls=[
                ToolCall("apply_patch", {"patch": patch}),
                ToolCall(
                    "shell", {"command": "touch x", "sandbox_permissions": "require_escalated", "justification": "j"}
                ),
            ]
        ),
        Reply(text="ok"),
    )
    result = run_agent(exec_args("go"), cwd=tmp_path, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    patched, escalated = tool_outputs(server)
    assert "outside the sandbox's writable roots" in patched and not (outside / "evil.txt").exists()
    assert "'never' does not allow" in escalated and not (tmp_path / "x").exists()


def test_without_a_mechanism_exec_warns_and_runs(server, tmp_path):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo ran > ran.txt"})]), Reply(text="ok"))
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": "none"}
    result = run_agent(exec_args("go"), cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "cannot be enforced" in result.stderr and result.stderr.count("cannot be enforced") == 1
    assert (tmp_path / "ran.txt").exists()


# --- an interactive session: the test answers the approval requests ---------------------------


def interactive_session(server, cwd: Path, monkeypatch, *overrides: str) -> Session:
    for name, value in provider_env(server, "openai-chat").items():
        monkeypatch.setenv(name, value)
    config = load_config(cwd, list(overrides), {"model_provider": "openai-chat", "model": "test-model"})
    return open_session(config, interactive=True)


async def run_answering(session: Session, prompt: str, *answers: str) -> list[ev.ApprovalRequest]:
    pending, asked = list(answers), []
    async for event in submit(session, prompt):
        if isinstance(event, ev.ApprovalRequest):
            asked.append(event)
            event.future.set_result(ev.ApprovalDecision(pending.pop(0)))
    assert pending == [], "fewer approval requests than expected"
    return asked


@needs_mechanism
async def test_on_failure_reruns_outside_the_sandbox_when_approved(server, tmp_path, monkeypatch):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo x > made.txt"})]), Reply(text="ok"))
    session = interactive_session(server, tmp_path, monkeypatch, "sandbox_mode=read-only", "approval_policy=on-failure")
    asked = await run_answering(session, "go", "approve")
    assert "failed in the sandbox" in asked[0].reason
    assert (tmp_path / "made.txt").read_text() == "x\n"
    assert "Exit code: 0" in tool_outputs(server)[0]


@needs_mechanism
async def test_on_request_escalation_approved_runs_unconfined(server, tmp_path, monkeypatch, outside):
    args = {
        "command": f"echo y > {outside}/granted.txt",
        "sandbox_permissions": "require_escalated",
        "justification": "write the shared cache",
    }
    server.script(Reply(tool_calls=[ToolCall("shell", args)]), Reply(text="ok"))
    session = interactive_session(server, tmp_path, monkeypatch)
    asked = await run_answering(session, "go", "approve")
    assert asked[0].reason == "Run outside the sandbox: write the shared cache"
    assert (outside / "granted.txt").read_text() == "y\n"


@needs_mechanism
async def test_on_request_failure_in_the_sandbox_tells_the_model_how_to_escalate(
    server, tmp_path, monkeypatch, outside
):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": f"echo y > {outside}/f.txt"})]), Reply(text="ok"))
    session = interactive_session(server, tmp_path, monkeypatch)
    assert await run_answering(session, "go") == []
    assert "require_escalated" in tool_outputs(server)[0] and not (outside / "f.txt").exists()


async def test_untrusted_session_deny_is_what_the_model_reads(server, tmp_path, monkeypatch):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "touch nope.txt"})]), Reply(text="ok"))
    session = interactive_session(server, tmp_path, monkeypatch, "approval_policy=untrusted")
    asked = await run_answering(session, "go", "deny")
    assert asked[0].summary == "touch nope.txt"
    assert tool_outputs(server)[0] == "the user denied this shell call"
    assert not (tmp_path / "nope.txt").exists()


def test_shell_schema_lets_the_model_ask_for_escalation(server, tmp_path):
    server.script(Reply(text="hi"))
    assert run_agent(exec_args("hi"), cwd=tmp_path, env=provider_env(server, "openai-chat")).returncode == 0
    tools = {t["function"]["name"]: t["function"] for t in server.requests[0].body["tools"]}
    props = tools["shell"]["parameters"]["properties"]
    assert props["sandbox_permissions"]["enum"] == ["use_default", "require_escalated"]
    assert "justification" in json.dumps(props)
