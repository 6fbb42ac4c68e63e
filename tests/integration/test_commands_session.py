"""Every built-in command and command files through a real Session and the fake server.

Each test checks what the command sends to the model (or that it sends nothing) and what it shows.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from tests.fake_server import Reply, ToolCall
from tests.processes import gone, started
from tests.session_helpers import collect_events, make_session

RUBRIC = "You are reviewing a code change as a careful senior engineer"
INIT_PROMPT = "Create an AGENTS.md file at the root of this repository"
READ_ONLY = ["grep", "list_dir", "memory_search", "read_file"]  # memory_search only reads


# --- helpers ------------------------------------------------------------------------------------


def git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True).stdout


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q", "-b", "main")
    git(root, "config", "user.email", "t@example.com")
    git(root, "config", "user.name", "Tester")
    (root / "app.py").write_text("def total(items):\n    return sum(items)\n")
    git(root, "add", ".")
    git(root, "commit", "-q", "-m", "first commit")
    return root


def of(events, kind):
    return [event for event in events if isinstance(event, kind)]


def contents(request) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else str(m["content"]) for m in request.body["messages"]]


def last_user_text(request) -> str:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"][-1]


def tool_names(request) -> list[str]:
    return sorted(tool["function"]["name"] for tool in request.body.get("tools", []))


def notice(events, title: str) -> str:
    return next(event.text for event in of(events, ev.Notice) if event.title == title)


# --- /review ------------------------------------------------------------------------------------


async def test_review_without_arguments_reviews_uncommitted_changes_with_read_only_tools(server, repo, monkeypatch):
    (repo / "app.py").write_text("def total(items):\n    return sum(items) + 1\n")
    (repo / "new_module.py").write_text("UNTRACKED_MARKER = True\n")
    server.script(Reply(text="[P1] off by one — app.py:2\n\npatch is incorrect"), Reply(text="fixed"))
    session = make_session(server, repo, monkeypatch)

    events = await collect_events(session, "/review")

    request = server.requests[0]
    sent = last_user_text(request)
    assert sent.startswith(RUBRIC)
    assert "uncommitted changes" in sent
    assert "-    return sum(items)\n+    return sum(items) + 1" in sent
    assert "+UNTRACKED_MARKER = True" in sent  # untracked files are part of the change
    assert tool_names(request) == READ_ONLY
    assert of(events, ev.UserMessage)[0].typed == "/review"
    assert of(events, ev.TurnComplete)[0].last_message.startswith("[P1] off by one")
    # the next turn has every tool again
    await collect_events(session, "fix it")
    assert "apply_patch" in tool_names(server.requests[1]) and "shell" in tool_names(server.requests[1])


async def test_review_with_nothing_changed_sends_nothing(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/review --uncommitted")
    assert "nothing to review" in notice(events, "review")
    assert server.requests == []


async def test_review_against_a_base_branch_uses_the_merge_base(server, repo, monkeypatch):
    git(repo, "checkout", "-q", "-b", "feature")
    (repo / "feature.py").write_text("FEATURE_CHANGE = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "feature work")
    git(repo, "checkout", "-q", "main")
    (repo / "main_only.py").write_text("MAIN_ONLY_CHANGE = 1\n")
    git(repo, "add", ".")
    git(repo, "commit", "-q", "-m", "main moves on")
    git(repo, "checkout", "-q", "feature")
    server.script(Reply(text="no findings\n\npatch is correct"))
    session = make_session(server, repo, monkeypatch)

    await collect_events(session, "/review --base main focus on naming")

    sent = last_user_text(server.requests[0])
    assert "+FEATURE_CHANGE = 1" in sent
    assert "MAIN_ONLY_CHANGE" not in sent  # main's later commits are not the branch's changes
    assert "since it left `main`" in sent
    assert sent.rstrip().endswith("</diff>") and "focus on naming" in sent


async def test_review_of_a_commit_sends_its_message_and_diff(server, repo, monkeypatch):
    (repo / "app.py").write_text("def total(items):\n    return 0\n")
    git(repo, "commit", "-q", "-am", "make total constant")
    sha = git(repo, "rev-parse", "HEAD").strip()
    server.script(Reply(text="[P0] total ignores its input — app.py:2"))
    session = make_session(server, repo, monkeypatch)

    await collect_events(session, f"/review --commit {sha[:10]}")

    sent = last_user_text(server.requests[0])
    assert "make total constant" in sent and "+    return 0" in sent


async def test_review_of_files_attaches_them(server, repo, monkeypatch):
    server.script(Reply(text="looks fine"))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "/review @app.py")
    sent = last_user_text(server.requests[0])
    assert sent.startswith(RUBRIC)
    assert '<attached_file path="app.py" lines="2">\n     1\tdef total(items):' in sent
    assert "<diff>" not in sent


@pytest.mark.parametrize(
    "text, message",
    [
        ("/review @missing.py", "@missing.py: no such file"),
        ("/review --base", "--base needs a branch"),
        ("/review --base no-such-branch", "no merge base"),
        ("/review --commit deadbeef", "unknown commit"),
        ("/review --frobnicate", "unknown /review option --frobnicate"),
        ("/review --base main --commit HEAD", "one of"),
    ],
)
async def test_review_errors_send_nothing(server, repo, monkeypatch, text, message):
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, text)
    assert message in of(events, ev.InputRejected)[0].message
    assert server.requests == []


async def test_the_review_turn_cannot_write(server, repo, monkeypatch):
    patch = "*** Begin Patch\n*** Delete File: app.py\n*** End Patch"
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]), Reply(text="could not edit"))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "/review @app.py")
    assert (repo / "app.py").exists()
    outputs = [m["content"] for m in server.requests[1].body["messages"] if m["role"] == "tool"]
    assert "not available" in outputs[0]


async def test_free_text_review_asks_the_model_to_explore(server, repo, monkeypatch):
    server.script(Reply(text="ok"))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "/review the error handling in the parser")
    sent = last_user_text(server.requests[0])
    assert "explore the repository" in sent and sent.endswith("the error handling in the parser")


# --- /init --------------------------------------------------------------------------------------


async def test_init_writes_agents_md_from_the_answer(server, repo, monkeypatch):
    server.script(Reply(text="```markdown\n# Working here\n\nRun `pytest`.\n```"))
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/init")
    sent = last_user_text(server.requests[0])
    assert sent.startswith(INIT_PROMPT) and "reply with the complete content of `AGENTS.md`" in sent
    assert tool_names(server.requests[0]) == READ_ONLY
    assert (repo / "AGENTS.md").read_text() == "# Working here\n\nRun `pytest`.\n"
    assert "wrote" in notice(events, "init")
    assert isinstance(events[-1], ev.TurnComplete)


async def test_init_refuses_to_overwrite_without_confirmation_in_exec(server, repo, monkeypatch):
    (repo / "AGENTS.md").write_text("hand-written\n")
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/init")
    assert (
        "already exists" in of(events, ev.InputRejected)[0].message
        and "/init --force" in of(events, ev.InputRejected)[0].message
    )
    assert server.requests == [] and (repo / "AGENTS.md").read_text() == "hand-written\n"


async def test_init_force_overwrites(server, repo, monkeypatch):
    (repo / "AGENTS.md").write_text("hand-written\n")
    server.script(Reply(text="# Better\n"))
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/init --force")
    assert (repo / "AGENTS.md").read_text() == "# Better\n"
    assert "updated" in notice(events, "init")


@pytest.mark.parametrize("answer, expected", [("deny", "hand-written\n"), ("approve", "# Better\n")])
async def test_init_asks_before_overwriting_in_the_tui(server, repo, monkeypatch, answer, expected):
    (repo / "AGENTS.md").write_text("hand-written\n")
    server.script(Reply(text="# Better\n"))
    session = make_session(server, repo, monkeypatch, interactive=True)
    events = await collect_events(session, "/init", answer=answer)
    request = of(events, ev.ApprovalRequest)[0]
    assert request.tool == "init" and "AGENTS.md" in request.summary
    assert request.reason == "# Better"  # the new version is shown before the question (issue 28)
    assert (repo / "AGENTS.md").read_text() == expected
    assert len(server.requests) == 1


async def test_init_with_an_empty_answer_writes_nothing(server, repo, monkeypatch):
    server.script(Reply(text="   "))
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/init")
    assert not (repo / "AGENTS.md").exists()
    assert of(events, ev.TurnFailed) and "no content" in of(events, ev.Error)[0].message


# --- /compact -----------------------------------------------------------------------------------


async def test_compact_sends_a_summary_request_with_the_focus(server, repo, monkeypatch):
    server.script(Reply(text="Noted: the API uses v2. " * 100), Reply(text="SUMMARY: API v2."))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "remember that the API is v2")
    events = await collect_events(session, "/compact keep the API version")
    assert "keep the API version" in last_user_text(server.requests[1])
    finished = of(events, ev.CompactionFinished)[0]
    assert finished.trigger == "manual" and "SUMMARY: API v2." in finished.summary


async def test_compact_on_a_short_conversation_is_refused_with_the_reason(server, repo, monkeypatch):
    server.script(Reply(text="Noted: the API uses v2."))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "remember that the API is v2")
    events = await collect_events(session, "/compact")
    assert not of(events, ev.CompactionFinished) and len(server.requests) == 1  # no summary paid for
    notice = of(events, ev.Notice)[-1].text
    assert notice.startswith("not compacted: the conversation is short") and "would not get smaller" in notice


# --- reports: /status /context /diff /skills /help ----------------------------------------------


async def test_status_reports_without_a_request(server, repo, monkeypatch):
    (repo / "AGENTS.md").write_text("Be brief.\n")
    session = make_session(server, repo, monkeypatch, 'approval_policy="untrusted"', 'sandbox_mode="read-only"')
    events = await collect_events(session, "/status")
    text = notice(events, "status")
    for expected in (
        "test-model",
        "openai-chat",
        str(repo),
        "mode       agent",
        "untrusted",
        "read-only",
        str(repo / "AGENTS.md"),
        "skills",
        "window",
        "counting",
    ):
        assert expected in text
    assert server.requests == []


async def test_status_names_a_cut_agents_md(server, repo, monkeypatch):
    (repo / "AGENTS.md").write_text("x" * 5000)
    session = make_session(server, repo, monkeypatch, "project_doc_max_bytes=1000")
    text = notice(await collect_events(session, "/status"), "status")
    assert "cut to fit project_doc_max_bytes" in text and "warnings:" in text


async def test_context_breaks_the_window_down_by_part(server, repo, monkeypatch):
    (repo / "AGENTS.md").write_text("Be brief.\n" * 50)
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": "app.py"})]), Reply(text="done"))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "read app.py")
    usage = of(await collect_events(session, "/context"), ev.ContextUsage)[0]
    parts = {part.name: part.tokens for part in usage.parts}
    assert list(parts) == [
        "system prompt",
        "tool schemas",
        "AGENTS.md",
        "skills",
        "environment",
        "memories",
        "conversation",
        "tool outputs",
    ]
    assert all(parts[name] > 0 for name in parts if name != "memories")  # nothing saved, nothing recalled
    assert usage.used == sum(parts.values()) and usage.window == session.effective_window
    assert len(server.requests) == 2  # /context itself sent nothing


async def test_diff_shows_tracked_and_untracked_changes(server, repo, monkeypatch):
    (repo / "app.py").write_text("changed\n")
    (repo / "fresh.txt").write_text("fresh\n")
    session = make_session(server, repo, monkeypatch)
    text = notice(await collect_events(session, "/diff"), "diff")
    assert "+changed" in text and "+fresh" in text


async def test_diff_outside_a_repository_is_an_error(server, tmp_path, monkeypatch):
    session = make_session(server, tmp_path, monkeypatch)
    assert "not inside a git repository" in of(await collect_events(session, "/diff"), ev.InputRejected)[0].message


async def test_skills_lists_repository_skills(server, repo, monkeypatch):
    skill = repo / ".agent" / "skills" / "release"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: release\ndescription: Cut a release of this project.\n---\nSteps.\n")
    session = make_session(server, repo, monkeypatch)
    text = notice(await collect_events(session, "/skills"), "skills")
    assert "$release" in text and "Cut a release of this project." in text and "[repo]" in text


async def test_help_lists_builtins_and_custom_commands(server, repo, monkeypatch):
    commands = repo / ".agent" / "commands"
    commands.mkdir(parents=True)
    (commands / "explain.md").write_text(
        "---\ndescription: Explain code simply\nargument-hint: <file>\n---\nExplain $1"
    )
    session = make_session(server, repo, monkeypatch)
    text = notice(await collect_events(session, "/help"), "help")
    assert "/review" in text and "/compact [focus | show]" in text and "/autocompact" in text and "/quit" in text
    assert "/explain <file>" in text and "Explain code simply (repo)" in text
    assert "@path" in text and "!`cmd`" in text


# --- /model and /mode ---------------------------------------------------------------------------


async def test_model_switch_appends_a_fragment_and_keeps_the_prefix(server, repo, monkeypatch):
    server.script(Reply(text="one"), Reply(text="two"))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "first")
    first_client = session.client
    events = await collect_events(session, "/model other-model")
    assert "test-model → other-model" in notice(events, "model")
    await collect_events(session, "second")
    await session.aclose()
    assert first_client._sdk_client is None  # the replaced client's connections closed with the session
    first, second = server.requests
    assert first.body["model"] == "test-model" and second.body["model"] == "other-model"
    assert second.body["messages"][: len(first.body["messages"])] == first.body["messages"]
    assert any("switched the model from test-model to other-model" in text for text in contents(second))


async def test_mode_switch_limits_tools_and_keeps_the_prefix(server, repo, monkeypatch):
    server.script(Reply(text="one"), Reply(text="two"))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "first")
    await collect_events(session, "/mode plan")
    await collect_events(session, "second")
    first, second = server.requests
    assert tool_names(second) == ["grep", "list_dir", "memory_search", "read_file", "task", "update_plan"]
    assert second.body["messages"][: len(first.body["messages"])] == first.body["messages"]
    assert any("switched to plan mode" in text for text in contents(second))
    assert session.mode == "plan"


async def test_model_mode_and_autocompact_change_the_session_not_its_config(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    config = session.config
    for command in ("/model qwen2.5-coder:7b", "/mode ask", "/autocompact 50%"):
        assert not of(await collect_events(session, command), ev.InputRejected)
    assert (session.model, session.mode, session.window.tokens) == ("qwen2.5-coder:7b", "ask", 32_768)
    assert session.auto_compact_limit == 32_768 * 95 // 100 // 2
    assert session.config is config and (config.model, config.mode, config.auto_compact_percent) == (
        "test-model",
        "agent",
        85,
    )


@pytest.mark.parametrize("text, message", [("/mode chaos", "unknown mode"), ("/model a b", "one model name")])
async def test_model_and_mode_reject_bad_arguments(server, repo, monkeypatch, text, message):
    session = make_session(server, repo, monkeypatch)
    assert message in of(await collect_events(session, text), ev.InputRejected)[0].message


# --- front-end actions --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, action",
    [
        ("/new", ev.CommandAction("new")),
        ("/quit", ev.CommandAction("quit")),
        ("/exit", ev.CommandAction("quit")),
        ("/resume 20250101-abc", ev.CommandAction("resume", "20250101-abc")),
    ],
)
async def test_front_end_actions_are_events(server, repo, monkeypatch, text, action):
    session = make_session(server, repo, monkeypatch)
    assert await collect_events(session, text) == [action]


# --- command files ------------------------------------------------------------------------------


def command_file(repo: Path, name: str, text: str) -> None:
    path = repo / ".agent" / "commands" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


async def test_a_command_file_becomes_the_prompt(server, repo, monkeypatch):
    command_file(repo, "git/commit.md", "---\ndescription: commit\n---\nCommit with message: $1. Files: $ARGUMENTS")
    server.script(Reply(text="committed"))
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, '/git:commit "fix the bug" @app.py')
    sent = last_user_text(server.requests[0])
    assert sent.startswith('Commit with message: fix the bug. Files: "fix the bug" @app.py')
    assert '<attached_file path="app.py"' in sent
    assert of(events, ev.UserMessage)[0].typed == '/git:commit "fix the bug" @app.py'


async def test_a_command_file_runs_its_commands_before_sending(server, repo, monkeypatch):
    command_file(repo, "changes.md", "Recent history:\n!`git log --oneline -1`\nSummarize it.")
    server.script(Reply(text="summary"))
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/changes")
    sent = last_user_text(server.requests[0])
    assert '<command_output command="git log --oneline -1">' in sent and "first commit" in sent
    assert of(events, ev.ToolCallEnd)[0].exit_code == 0


async def test_command_file_model_and_allowed_tools_apply_to_its_turn_only(server, repo, monkeypatch):
    command_file(repo, "look.md", "---\nmodel: small-model\nallowed-tools: Read, Grep\n---\nLook around.")
    server.script(Reply(text="looked"), Reply(text="normal"))
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "/look")
    await collect_events(session, "next")
    assert server.requests[0].body["model"] == "small-model"
    assert tool_names(server.requests[0]) == ["grep", "read_file"]
    assert server.requests[1].body["model"] == "test-model"
    assert "shell" in tool_names(server.requests[1])


async def test_a_command_files_model_brings_its_window_for_its_turn_as_model_does(server, repo, monkeypatch):
    command_file(repo, "look.md", "---\nmodel: qwen2.5-coder:7b\n---\nLook around.")
    server.script(Reply(text="looked"), Reply(text="normal"))
    session = make_session(server, repo, monkeypatch)
    looked = await collect_events(session, "/look")
    normal = await collect_events(session, "next")
    assert of(looked, ev.TokenCount)[-1].context_window == 32_768 * 95 // 100  # the model table's, as /model would
    assert of(normal, ev.TokenCount)[-1].context_window == session.config.context_window * 95 // 100


async def test_broken_command_files_warn_once_and_do_not_stop_others(server, repo, monkeypatch):
    command_file(repo, "broken.md", "---\ndescription: [never closed\n")
    command_file(repo, "fine.md", "Fine.")
    server.script(Reply(text="a"), Reply(text="b"))
    session = make_session(server, repo, monkeypatch)
    first = await collect_events(session, "/fine")
    second = await collect_events(session, "/fine")
    assert len([w for w in of(first, ev.Warning) if "broken.md" in w.message]) == 1
    assert not [w for w in of(second, ev.Warning) if "broken.md" in w.message]
    assert len(server.requests) == 2


async def test_an_unknown_command_sends_nothing_and_suggests(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/reveiw @app.py")
    assert len(events) == 1 and events[0].suggestions[0] == "review"
    assert "unknown command /reveiw; did you mean /review" in events[0].message
    assert server.requests == []


# --- expansion in ordinary prompts, under the approval policy -----------------------------------


async def test_a_prompt_attaches_files_and_inlines_command_output(server, repo, monkeypatch):
    server.script(Reply(text="ok"))
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "Check @app.py against !`echo EXPECTED-42`")
    sent = last_user_text(server.requests[0])
    assert "EXPECTED-42" in sent and "Exit code: 0" in sent and "     2\t    return sum(items)" in sent
    message = of(events, ev.UserMessage)[0]
    assert message.typed == "Check @app.py against !`echo EXPECTED-42`" and message.text == sent


async def test_a_command_in_a_prompt_leaves_no_approval_state_behind(server, repo, monkeypatch):
    """The verdict a rule gave a prompt's !`cmd` ends with it, as a model's call's does."""
    server.script(Reply(text="ok"))
    session = make_session(server, repo, monkeypatch, 'permissions.allow=["Bash(echo:*)"]')
    await collect_events(session, "see !`echo RULED`")
    assert "RULED" in last_user_text(server.requests[0])
    assert session.approvals.verdicts == {}


async def test_a_prompt_without_expansions_is_sent_as_typed(server, repo, monkeypatch):
    server.script(Reply(text="ok"))
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "mail me@example.com about @alice")
    assert last_user_text(server.requests[0]) == "mail me@example.com about @alice"
    assert of(events, ev.UserMessage)[0].typed is None


async def test_exec_denies_a_command_the_policy_would_ask_about(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch, 'approval_policy="untrusted"')
    events = await collect_events(session, "look: !`touch created-by-command`")
    assert "was not run" in of(events, ev.InputRejected)[0].message
    assert not (repo / "created-by-command").exists() and server.requests == []


@pytest.mark.parametrize("answer, runs", [("approve", True), ("deny", False)])
async def test_the_tui_asks_before_running_a_command(server, repo, monkeypatch, answer, runs):
    server.script(Reply(text="ok"))
    session = make_session(server, repo, monkeypatch, 'approval_policy="untrusted"', interactive=True)
    events = await collect_events(session, "look: !`touch created-by-command`", answer=answer)
    assert of(events, ev.ApprovalRequest)[0].summary == "touch created-by-command"
    assert (repo / "created-by-command").exists() is runs
    assert len(server.requests) == (1 if runs else 0)


async def test_interrupting_a_command_leaves_nothing_running(server, repo, monkeypatch):
    # unsandboxed: this checks that the interrupt reaches the command, not how the sandbox kills
    session = make_session(server, repo, monkeypatch, 'sandbox_mode="danger-full-access"')
    stream = submit(session, "!`sleep 30.0303`")
    pid = None
    async for event in stream:
        if isinstance(event, ev.ToolCallBegin):
            pid = await started("sleep", "30.0303")
            session.interrupt()
    assert pid is not None and await gone(pid) and server.requests == []
