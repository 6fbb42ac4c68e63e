"""Permission rules in a real session: a Read deny hides a file from every tool, "don't ask again"
saves a rule that the next call obeys, and `agent exec --json` names the rule that decided."""

from __future__ import annotations

import json

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.session_helpers import collect_events, make_session

SECRET = "s3cr3t-value"


def tool_outputs(events) -> dict[str, str]:
    return {event.call_id: event.output for event in events if isinstance(event, ev.ToolCallEnd)}


async def test_a_read_deny_rule_hides_files_from_every_tool(server, tmp_path, monkeypatch, isolated_home):
    repo = git_init(tmp_path / "repo")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"deny": ["Read(./.env)", "Read(secrets/**)"]}})
    )
    (repo / ".env").write_text(f"TOKEN={SECRET}\n")
    (repo / "secrets").mkdir()
    (repo / "secrets" / "key.txt").write_text(f"{SECRET}\n")
    (repo / "app.py").write_text("print('no secret here')\n")
    server.script(
        Reply(
            tool_calls=[
                ToolCall("read_file", {"path": ".env"}, "read"),
                ToolCall("grep", {"pattern": "s3cr3t|no secret"}, "grep"),
                ToolCall("list_dir", {"path": "."}, "list"),
                ToolCall("grep", {"pattern": "s3cr3t", "path": "secrets/key.txt"}, "grep-file"),
            ]
        ),
        Reply(text="done"),
        Reply(text="nothing attached"),
    )
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "look around")
    outputs = tool_outputs(events)
    assert "Read(./.env)" in outputs["read"] and SECRET not in outputs["read"]
    assert outputs["grep"] == "app.py:1:print('no secret here')"
    assert "app.py" in outputs["list"] and ".env" not in outputs["list"] and "key.txt" not in outputs["list"]
    assert "Read(secrets/**)" in outputs["grep-file"]
    events = await collect_events(session, "what is in @.env and @secrets/key.txt")
    sent = json.dumps(server.requests[-1].body)
    assert SECRET not in sent and "was not attached: the permission rule `Read(./.env)` hides it" in sent
    await session.aclose()


async def test_dont_ask_again_saves_the_rule_and_the_next_call_is_not_asked(
    server, tmp_path, monkeypatch, isolated_home
):
    repo = git_init(tmp_path / "repo")
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "touch first.txt"}, "one")]),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch second.txt"}, "two")]),
        Reply(text="done"),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch third.txt"}, "three")]),
        Reply(text="done again"),
    )
    session = make_session(server, repo, monkeypatch, 'approval_policy="untrusted"', interactive=True, trust=False)
    requests = []
    async for event in submit(session, "make files"):
        if isinstance(event, ev.ApprovalRequest):
            requests.append(event)
            assert event.suggested_rule == "Bash(touch:*)" and event.rule_files == ("agent", "claude")
            event.future.set_result(ev.ApprovalDecision("approve_always", rule=event.suggested_rule, save_to="claude"))
    assert [request.summary for request in requests] == ["touch first.txt"]  # the second call was not asked about
    assert (repo / "first.txt").exists() and (repo / "second.txt").exists()
    settings = json.loads((repo / ".claude" / "settings.local.json").read_text())
    assert settings == {"permissions": {"allow": ["Bash(touch:*)"]}}
    await session.aclose()
    # A new session in the same folder reads the rule and does not ask either; the choice of file is kept.
    fresh = make_session(server, repo, monkeypatch, 'approval_policy="untrusted"', interactive=True, trust=False)
    events = await collect_events(fresh, "one more")
    assert not [event for event in events if isinstance(event, ev.ApprovalRequest)]
    assert (repo / "third.txt").exists()
    assert fresh.approvals.rule_files() == ("claude",)
    end = next(event for event in events if isinstance(event, ev.ToolCallEnd))
    assert end.permission == "allow" and end.permission_rules[0][0] == "Bash(touch:*)"
    await fresh.aclose()


def test_exec_json_items_carry_the_rule_that_decided(server, tmp_path, isolated_home):
    repo = git_init(tmp_path / "repo")
    (repo / "keep.txt").write_text("keep\n")
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "ls && rm keep.txt"}, "rm")]), Reply(text="could not")
    )
    result = run_agent(
        [
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "--json",
            "-c",
            'permissions.deny=["Bash(rm:*)"]',
            "clean up",
        ],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    items = [json.loads(line)["item"] for line in result.stdout.splitlines() if '"item.completed"' in line]
    command = next(item for item in items if item["type"] == "command_execution")
    assert command["status"] == "failed" and "Bash(rm:*)" in command["aggregated_output"]
    assert command["permission"] == {
        "decision": "deny",
        "rules": [{"rule": "Bash(rm:*)", "source": '-c permissions.deny=["Bash(rm:*)"]'}],
    }
    assert (repo / "keep.txt").exists()


async def test_both_grep_back_ends_leave_hidden_files_out(tmp_path):
    from agent_cli.permissions.engine import Permissions
    from agent_cli.permissions.rules import parse_rule
    from agent_cli.tools.base import ToolContext
    from agent_cli.tools.grep import search

    (tmp_path / ".env").write_text(f"TOKEN={SECRET}\n")
    (tmp_path / "notes.txt").write_text(f"not the {SECRET[:6]}\n")
    permissions = Permissions([parse_rule("Read(.env)", "deny", "test", tmp_path)], tmp_path)
    ctx = ToolContext(cwd=tmp_path, data_dir=tmp_path / "data", read_denied=permissions.read_denied)
    for use_rg in (True, False):
        result = await search(ctx, "s3cr3t", use_rg=use_rg)
        assert [match.path for match in result.matches] == ["notes.txt"] and result.total == 1, use_rg


async def test_permissions_lists_rules_their_files_and_the_last_decisions(server, tmp_path, monkeypatch, isolated_home):
    repo = git_init(tmp_path / "repo")
    (repo / ".claude").mkdir()
    (repo / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(git status)"], "deny": ["Bash(rm:*)"]}})
    )
    server.script(
        Reply(
            tool_calls=[
                ToolCall("shell", {"command": "git status"}, "a"),
                ToolCall("shell", {"command": "rm -f x"}, "b"),
            ]
        ),
        Reply(text="done"),
    )
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "go")
    events = await collect_events(session, "/permissions")
    text = next(event.text for event in events if isinstance(event, ev.Notice))
    assert "deny:\n  Bash(rm:*)" in text and "allow:\n  Bash(git status)" in text and ".claude/settings.json" in text
    assert "shell git status: allow by Bash(git status)" in text and "shell rm -f x: deny by Bash(rm:*)" in text
    untrusted = make_session(server, repo, monkeypatch, trust=False)
    events = await collect_events(untrusted, "/permissions")
    text = next(event.text for event in events if isinstance(event, ev.Notice))
    assert "Bash(git status)" in text and "[not applied: the folder is not trusted]" in text
    await session.aclose()
    await untrusted.aclose()


async def test_an_allow_rule_does_not_answer_for_a_process_that_outlives_the_session(
    server, tmp_path, monkeypatch, isolated_home
):
    repo = git_init(tmp_path / "repo")
    args = {"command": "sleep 600", "run_in_background": True, "keep_alive": True}
    server.script(
        Reply(tool_calls=[ToolCall("shell", args, "k"), ToolCall("shell", {"command": "sleep 0"}, "s")]),
        Reply(text="ok"),
    )
    session = make_session(
        server,
        repo,
        monkeypatch,
        'permissions.allow=["Bash(sleep:*)"]',
        'approval_policy="untrusted"',
        interactive=True,
    )
    events = await collect_events(session, "start it", answer="deny")
    asked = [event.call_id for event in events if isinstance(event, ev.ApprovalRequest)]
    assert asked == ["k"]  # the plain `sleep 0` was allowed by the rule without a question
    await session.aclose()


def test_exec_a_deny_rule_holds_against_wrappers_shell_strings_and_expanded_programs(server, tmp_path, isolated_home):
    repo = git_init(tmp_path / "repo")
    (repo / "keep.txt").write_text("keep\n")
    spellings = [
        "bash -c 'rm keep.txt'",
        "timeout 5 /bin/rm keep.txt",
        "$'\\x72m' keep.txt",
        "R=rm; $R keep.txt",
        "eval rm keep.txt",
        "r\\\nm keep.txt",
    ]
    server.script(
        Reply(
            tool_calls=[ToolCall("shell", {"command": command}, f"c{index}") for index, command in enumerate(spellings)]
        ),
        Reply(text="could not"),
    )
    result = run_agent(
        [
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "--json",
            "-c",
            'permissions.deny=["Bash(rm:*)"]',
            "clean up",
        ],
        cwd=repo,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    items = [json.loads(line)["item"] for line in result.stdout.splitlines() if '"item.completed"' in line]
    commands = [item for item in items if item["type"] == "command_execution"]
    assert len(commands) == len(spellings) and all(item["status"] == "failed" for item in commands)
    assert all("Bash(rm:*)" in item["aggregated_output"] for item in commands)
    assert (repo / "keep.txt").exists()
