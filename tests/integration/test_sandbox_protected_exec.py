"""Config planted for the next session (issue 27, item 2), end to end: neither a sandboxed command
nor apply_patch may create or change .mcp.json, .agent/, .claude/ or .git/, existing or not,
unless the user approves that very write (what a command creates there is undone when it ends)."""

from __future__ import annotations

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.config import load_config
from agent_cli.runtime import open_session
from agent_cli.sandbox.policy import landlock_mounts_work, working_mechanisms
from agent_cli.session.session import Session
from tests.conftest import provider_env, run_agent
from tests.fake_server import Reply, ToolCall

MECHANISMS = list(working_mechanisms())
PLANT = (
    "mkdir -p .agent && echo '[[hooks.Stop]]' > .agent/config.toml; mkdir -p .claude && echo '{}' > .claude/settings.json; "
    "echo '{\"mcpServers\": {}}' > .mcp.json; mv .git .gitx; echo written > AGENTS.md; echo ok"
)


def patch(path: str) -> dict:
    return {"patch": f"*** Begin Patch\n*** Add File: {path}\n+planted\n*** End Patch"}


def tool_outputs(server) -> list[str]:
    return [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"]


@pytest.mark.skipif(not MECHANISMS, reason="no sandbox mechanism here")
@pytest.mark.parametrize("mechanism", MECHANISMS)
def test_exec_plants_nothing_for_the_next_session(server, tmp_path, mechanism):
    if mechanism == "landlock" and not landlock_mounts_work():
        pytest.skip("the Landlock launcher cannot make a mount namespace here")
    (tmp_path / ".git").mkdir()
    server.script(
        Reply(
            tool_calls=[
                ToolCall("shell", {"command": PLANT}),
                ToolCall("apply_patch", patch(".mcp.json")),
                ToolCall("apply_patch", patch("sub/.git/hooks/pre-commit")),
            ]
        ),
        Reply(text="done"),
    )
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "plant"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    shell, mcp, hook = tool_outputs(server)
    assert "ok" in shell and (tmp_path / "AGENTS.md").read_text() == "written\n"
    assert "protected path" in mcp and "cannot approve" in mcp and "protected path" in hook
    assert sorted(p.name for p in tmp_path.iterdir()) == [".git", "AGENTS.md"]  # what the command made there was undone
    assert list((tmp_path / ".git").iterdir()) == []


def interactive_session(server, cwd, monkeypatch) -> Session:
    for name, value in provider_env(server, "openai-chat").items():
        monkeypatch.setenv(name, value)
    config = load_config(cwd, [], {"model_provider": "openai-chat", "model": "test-model"})
    return open_session(config, interactive=True)


async def test_a_protected_write_is_asked_for_each_time(server, tmp_path, monkeypatch):
    server.script(
        Reply(tool_calls=[ToolCall("apply_patch", patch(".mcp.json"))]),
        Reply(tool_calls=[ToolCall("apply_patch", patch(".claude/settings.json"))]),
        Reply(tool_calls=[ToolCall("apply_patch", patch(".agent/config.toml"))]),
        Reply(text="ok"),
    )
    session = interactive_session(server, tmp_path, monkeypatch)
    answers, asked = ["approve_session", "deny", "approve"], []
    async for event in submit(session, "go"):
        if isinstance(event, ev.ApprovalRequest):
            asked.append(event.reason)
            event.future.set_result(ev.ApprovalDecision(answers.pop(0)))
    await session.aclose()
    assert len(asked) == 3 and all("protected path" in reason for reason in asked)
    assert (tmp_path / ".mcp.json").read_text() == "planted\n"
    assert not (tmp_path / ".claude").exists()
    assert (tmp_path / ".agent" / "config.toml").read_text() == "planted\n"


@pytest.mark.parametrize("mechanism", [*MECHANISMS, "none"])
def test_status_says_what_the_sandbox_cannot_enforce_here(server, tmp_path, mechanism):
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    result = run_agent(["exec", "--provider", "openai-chat", "-m", "test-model", "/status"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    [row] = [line for line in result.stderr.splitlines() if "not enforced" in line]
    expected = {"bubblewrap": "nothing", "landlock": "no PID namespace", "none": "commands run unconfined"}[mechanism]
    assert expected in row
