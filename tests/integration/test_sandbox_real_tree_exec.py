"""The sandbox shows the user's tree as it is (issue 51, item 5): in a repository without `.agent/`,
`.claude/` or `.mcp.json`, a sandboxed `ls -A` lists exactly what the user's does and
`cat .mcp.json` finds no file (no placeholder folders are made to mount over); what a command
creates at those names does not outlive it (moved away, and the model is told); and 20 `agent
exec` running at once in one repository, twice (40 runs), each run their command (placeholders
shared between processes once raced: "Can't find source path .../.agent"). Both mechanisms."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_cli.sandbox.policy import landlock_mounts_work, working_mechanisms
from tests.conftest import agent_process_env, git_init, provider_env, run_agent
from tests.fake_server import FakeModelServer, Reply, ToolCall

MECHANISMS = list(working_mechanisms())
EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model", "-s", "workspace-write"]
ABSENT = (".agent", ".claude", ".mcp.json")


@pytest.fixture(params=MECHANISMS or [pytest.param("none", marks=pytest.mark.skip("no sandbox mechanism here"))])
def mechanism(request):
    if request.param == "landlock" and not landlock_mounts_work():
        pytest.skip("the Landlock launcher cannot make a mount namespace here")
    return request.param


def tool_outputs(server: FakeModelServer) -> list[str]:
    return [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"]


def repository(tmp_path: Path) -> Path:
    repo = git_init(tmp_path / "repo")
    (repo / "src.py").write_text("print(1)\n")
    return repo


def exec_once(server: FakeModelServer, repo: Path, mechanism: str, command: str) -> str:
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": command})]), Reply(text="done"))
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    result = run_agent([*EXEC, "go"], cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    return tool_outputs(server)[0]


def test_a_sandboxed_listing_is_the_users_listing(server, tmp_path, mechanism):
    repo = repository(tmp_path)
    output = exec_once(server, repo, mechanism, "ls -A; echo ---; cat .mcp.json")
    listed = output.split("Output:\n", 1)[1].split("---")[0].split()
    assert sorted(listed) == sorted(os.listdir(repo)), output
    assert "No such file or directory" in output and "Is a directory" not in output
    assert not any((repo / name).exists() for name in ABSENT)


def test_what_a_command_creates_at_a_protected_name_does_not_outlive_it(server, tmp_path, mechanism):
    repo = repository(tmp_path)
    plant = (
        "mkdir .agent && echo '[[hooks.Stop]]' > .agent/config.toml; mkdir .claude; "
        "echo '{\"mcpServers\": {}}' > .mcp.json; echo ok > notes.txt"
    )
    output = exec_once(server, repo, mechanism, plant)
    assert not any((repo / name).exists() for name in ABSENT), output
    assert (repo / "notes.txt").read_text() == "ok\n"
    for name in ABSENT:
        assert f"{repo / name} is protected" in output, output


def test_twenty_agents_at_once_in_one_repository_each_run_their_command(tmp_path, mechanism):
    repo = repository(tmp_path)
    servers = [FakeModelServer().start() for _ in range(20)]
    try:
        for round_ in range(2):
            processes = []
            for index, server in enumerate(servers):
                command = f"ls -A > seen-{round_}-{index}.txt"
                server.script(Reply(tool_calls=[ToolCall("shell", {"command": command})]), Reply(text="done"))
                env = agent_process_env(**provider_env(server, "openai-chat"), AGENT_SANDBOX_MECHANISM=mechanism)
                processes.append(
                    subprocess.Popen(
                        [sys.executable, "-m", "agent_cli", *EXEC, "go"],
                        cwd=repo,
                        env=env,
                        stdin=subprocess.DEVNULL,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        text=True,
                    )
                )
            for process in processes:
                _, stderr = process.communicate(timeout=300)
                assert process.returncode == 0, stderr
            for index, server in enumerate(servers):
                output = tool_outputs(server)[0]
                assert output.startswith("Exit code: 0\n") and "Can't find source path" not in output, output
                seen = (repo / f"seen-{round_}-{index}.txt").read_text().split()
                assert not set(seen) & set(ABSENT), seen
    finally:
        for server in servers:
            server.stop()
    assert len(list(repo.glob("seen-*.txt"))) == 40
    assert not any((repo / name).exists() for name in ABSENT)
