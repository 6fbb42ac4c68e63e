"""Permission rules fail closed under `agent exec`: with `deny: Bash(rm:*)` and `ask: Bash(git push:*)`,
every spelling that ran for real before (issue 33) leaves its file in place and the remote unpushed,
whether the engine sees through it (a shell's options, a here-doc, `trap`, an alias, git's global
options) or cannot (inline code, a pipe into a shell, a renamed binary), and plain commands still run.

The sandbox is off (`danger-full-access`), so only the rules stand between the model and the files."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from agent_cli import events as ev
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

# Each removes its own file, so a test failure names the spelling that got through.
REMOVALS = [
    "bash -o pipefail -c 'rm {f}'",
    "bash -e -o pipefail -c 'rm {f}'",
    "trap 'rm {f}' EXIT",
    "bash <<EOF\nrm {f}\nEOF",
    "bash <<< 'rm {f}'",
    "shopt -s expand_aliases\nalias zap='rm'\nzap {f}",
    "builtin eval 'rm {f}'",
    "coproc rm {f}",
    "git -c alias.zap='!rm {f}' zap",
    "git -c core.pager='rm {f}; cat' log",
    "flock /tmp/agent-test-lock rm {f}",
    "script -q -c 'rm {f}' /dev/null",
    "su -c 'rm {f}' root",
    "runuser -u root -- rm {f}",
    "strace -f -o /dev/null rm {f}",
    "awk 'BEGIN{{system(\"rm {f}\")}}'",
    "echo x | sed 's/.*/rm {f}/e'",
    "python3 -c 'import os; os.remove(\"{f}\")'",
    "perl -e 'unlink \"{f}\"'",
    "./renamed {f}",
    "./linked {f}",
    "env -S 'rm {f}'",
    "timeout 5 bash <<< 'rm {f}'",
    "zap() {{ bash; }}; zap <<< 'rm {f}'",
    "echo 'rm {f}' | base64 | base64 -d | sh",
]
PUSHES = [
    "git -C . push origin HEAD:refs/heads/c0",
    "git --no-pager push origin HEAD:refs/heads/c1",
    "git -c k.v=1 push origin HEAD:refs/heads/c2",
]


@pytest.fixture
def repo(tmp_path):
    root = git_init(tmp_path / "repo")
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", str(remote)], check=True)
    env = ["-c", "user.name=t", "-c", "user.email=t@example.com"]
    (root / "a.txt").write_text("a\n")
    subprocess.run(["git", "-C", str(root), *env, "add", "a.txt"], check=True)
    subprocess.run(["git", "-C", str(root), *env, "commit", "-qm", "a"], check=True)
    subprocess.run(["git", "-C", str(root), "remote", "add", "origin", str(remote)], check=True)
    shutil.copy("/bin/rm", root / "renamed")  # a copy of rm under another name
    (root / "linked").symlink_to(shutil.which("rm") or "/bin/rm")
    return root


def test_exec_a_deny_and_an_ask_rule_hold_against_every_spelling(server, repo, tmp_path, isolated_home):
    files = [f"f{index}.txt" for index in range(len(REMOVALS))]
    for name in files:
        (repo / name).write_text("keep\n")
    commands = [spelling.format(f=name) for spelling, name in zip(REMOVALS, files)] + PUSHES
    commands += ["touch ran.txt", "git status --short > status.txt"]
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": command}, f"c{i}") for i, command in enumerate(commands)]),
        Reply(text="done"),
    )
    result = run_agent(
        [
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "-s",
            "danger-full-access",
            "-c",
            'permissions.deny=["Bash(rm:*)"]',
            "-c",
            'permissions.ask=["Bash(git push:*)"]',
            "clean up and push",
        ],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    removed = [command for command, name in zip(commands, files) if not (repo / name).exists()]
    assert removed == []
    pushed = subprocess.run(
        ["git", "--git-dir", str(tmp_path / "remote.git"), "for-each-ref"], capture_output=True, text=True, check=True
    )
    assert pushed.stdout == ""
    assert (repo / "ran.txt").exists() and (repo / "status.txt").exists()  # plain commands still run


def test_exec_without_shell_deny_or_ask_rules_nothing_changes(server, repo, isolated_home):
    (repo / "gone.txt").write_text("x\n")
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "python3 -c 'import os; os.remove(\"gone.txt\")'"}, "c")]),
        Reply(text="done"),
    )
    result = run_agent(
        [
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "-s",
            "danger-full-access",
            "-c",
            'permissions.deny=["Read(./secret.txt)"]',
            "go",
        ],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    assert not (repo / "gone.txt").exists()


async def test_interactive_what_the_rules_cannot_see_is_asked_with_the_reason(server, repo, monkeypatch):
    """In the TUI's session the same commands are questions naming why; a "no" leaves the files."""
    (repo / "keep.txt").write_text("keep\n")
    commands = ["python3 -c 'import os; os.remove(\"keep.txt\")'", "echo 'rm keep.txt' | sh", "./renamed keep.txt"]
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": command}, f"c{i}") for i, command in enumerate(commands)]),
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch, 'permissions.deny=["Bash(rm:*)"]', interactive=True)
    events = await collect_events(session, "clean up", answer="deny")
    asked = [event for event in events if isinstance(event, ev.ApprovalRequest)]
    assert [event.call_id for event in asked] == ["c0", "c1", "c2"]
    assert all("Bash(rm:*)" in event.reason and "cannot tell what it runs" in event.reason for event in asked)
    assert all(event.suggested_rule is None for event in asked)  # an allow rule would not answer for them
    assert (repo / "keep.txt").exists()
    await session.aclose()
