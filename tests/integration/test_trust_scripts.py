"""Trust covers what a hook runs, not only its command line (issue 45): the files inside the
repository that a hook, status line, notify, MCP server or lint/test command names are hashed with
the rest, so a changed `scripts/hook.sh` asks again before it runs; and the ones the agent runs
outside the sandbox stay read-only in it, so a sandboxed command can neither rewrite one in place
nor swap its folder for another (both mechanisms)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli.config import load_config
from agent_cli.sandbox.policy import landlock_mounts_work, working_mechanisms
from agent_cli.trust.gate import record_answer, trust_state
from agent_cli.trust.inventory import unconfined_scripts
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall

MECHANISMS = list(working_mechanisms())
EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model", "-s", "workspace-write"]


@pytest.fixture(params=MECHANISMS or [pytest.param("none", marks=pytest.mark.skip("no sandbox mechanism here"))])
def mechanism(request):
    if request.param == "landlock" and not landlock_mounts_work():
        pytest.skip("the Landlock launcher cannot make a mount namespace here")
    return request.param


def hooked_repo(tmp_path: Path) -> Path:
    """A repository whose SessionStart hook (Claude's settings) runs `scripts/hook.sh`, which
    leaves a marker; the marker of a rewritten script is another one."""
    repo = git_init(tmp_path / "repo")
    (repo / "scripts").mkdir()
    script = repo / "scripts" / "hook.sh"
    script.write_text(f"#!/bin/sh\ntouch {tmp_path / 'hook-ran'}\n")
    script.chmod(0o755)
    (repo / ".claude").mkdir()
    hook = {"type": "command", "command": "scripts/hook.sh"}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"SessionStart": [{"hooks": [hook]}]}}))
    return repo


EVIL = "#!/bin/sh\ntouch {marker}\n"


@pytest.mark.parametrize(
    "settings",
    [
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "scripts/hook.sh"}]}]}},
        {
            "hooks": {
                "Stop": [{"hooks": [{"type": "command", "command": 'bash "$CLAUDE_PROJECT_DIR/scripts/hook.sh"'}]}]
            }
        },
        {"statusLine": {"type": "command", "command": "python3 scripts/hook.sh --fast"}},
    ],
    ids=["bare", "project-dir", "status-line"],
)
def test_a_changed_script_a_hook_runs_is_a_new_question(tmp_path, isolated_home, settings):
    repo = hooked_repo(tmp_path)
    (repo / ".claude" / "settings.json").write_text(json.dumps(settings))
    record_answer(load_config(repo), True)
    assert trust_state(load_config(repo)).trusted
    (repo / "scripts" / "hook.sh").write_text(EVIL.format(marker=tmp_path / "evil"))
    assert trust_state(load_config(repo)).needs_question


def test_the_scripts_of_every_kind_of_command_are_covered(tmp_path, isolated_home):
    repo = git_init(tmp_path / "repo")
    for name in ("server.js", "lint.sh", "notify.py", "bar.sh", "hook.sh", "claude-hook.sh"):
        (repo / name).write_text("x\n")
    (repo / ".mcp.json").write_text(json.dumps({"mcpServers": {"s": {"command": "node", "args": ["server.js"]}}}))
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text(
        'lint_command = "./lint.sh --all"\nnotify = ["python3", "notify.py"]\n'
        '[status_line]\ncommand = "sh bar.sh"\n[[hooks.Stop]]\ncommand = "sh ./hook.sh"\n'
    )
    (repo / ".claude").mkdir()
    hook = {"type": "command", "command": "./claude-hook.sh"}
    (repo / ".claude" / "settings.json").write_text(json.dumps({"hooks": {"Stop": [{"hooks": [hook]}]}}))
    config = load_config(repo)
    scripts = {path.name for path in trust_state(config).inventory.scripts}
    assert scripts == {"server.js", "lint.sh", "notify.py", "bar.sh", "hook.sh", "claude-hook.sh"}
    # the ones that run outside the sandbox stay read-only in it; lint runs inside it
    assert {path.name for path in unconfined_scripts(config)} == scripts - {"lint.sh"}
    for name in sorted(scripts):
        record_answer(config, True)
        (repo / name).write_text("changed\n")
        assert trust_state(load_config(repo)).needs_question, name


def test_a_sandboxed_command_cannot_rewrite_the_script_a_hook_runs(server, tmp_path, isolated_home, mechanism):
    """Run 1 (trusted): the model's command rewrites the script in place and swaps its folder;
    neither lasts. Run 2 runs the user's script without a question, and never the model's."""
    repo = hooked_repo(tmp_path)
    record_answer(load_config(repo), True)
    evil = EVIL.format(marker=tmp_path / "evil").replace("\n", "\\n")
    rewrite = (
        f"printf '{evil}' > scripts/hook.sh; mv scripts scripts.old && mkdir scripts && "
        f"printf '{evil}' > scripts/hook.sh && chmod +x scripts/hook.sh; echo tried"
    )
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": rewrite})]), Reply(text="done"), Reply(text="again"))
    env = {**provider_env(server, "openai-chat"), "AGENT_SANDBOX_MECHANISM": mechanism}
    first = run_agent([*EXEC, "go"], cwd=repo, env=env)
    assert first.returncode == 0, first.stderr
    assert (tmp_path / "hook-ran").exists()
    output = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"][0]
    assert "Read-only file system" in output and "undone" in output, output
    assert not (repo / "scripts" / "hook.sh").exists() or "evil" not in (repo / "scripts" / "hook.sh").read_text()
    (tmp_path / "hook-ran").unlink()
    (repo / "scripts").rmdir()  # empty: the model's script in it was moved away
    (repo / "scripts.old").rename(repo / "scripts")  # the user puts the folder back
    second = run_agent([*EXEC, "again"], cwd=repo, env=env)
    assert second.returncode == 0, second.stderr
    assert not (tmp_path / "evil").exists()
    assert (tmp_path / "hook-ran").exists() and "not trusted" not in second.stderr


def test_a_script_changed_between_sessions_asks_before_it_runs(server, tmp_path, isolated_home):
    """However the script changed (here: outside any sandbox), the next `agent exec` does not run
    it: the folder is not trusted with that content."""
    repo = hooked_repo(tmp_path)
    record_answer(load_config(repo), True)
    (repo / "scripts" / "hook.sh").write_text(EVIL.format(marker=tmp_path / "evil"))
    server.script(Reply(text="done"))
    result = run_agent([*EXEC, "go"], cwd=repo, env=provider_env(server, "openai-chat"))
    assert result.returncode == 0, result.stderr
    assert not (tmp_path / "evil").exists() and "not trusted" in result.stderr
