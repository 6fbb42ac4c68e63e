"""Claude Code plugins inside real turns: a real Session, the fake server over HTTP.

Every fixture plugin is written here in Claude Code's format, with hook scripts that read
Claude's vocabulary (``tool_name`` Bash / Edit / Write, ``tool_input.file_path``...).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli import events as ev
from tests.conftest import git_init, provider_env, run_agent
from tests.fake_server import Reply, ToolCall
from tests.plugin_fixtures import hooks_json, write_plugin
from tests.session_helpers import collect_events, make_session

# Reads the hook's JSON from stdin, appends it to log.jsonl beside the session, then acts.
GUARD = """\
import json, os, sys
event = json.load(sys.stdin)
with open(os.path.join(event["cwd"], "log.jsonl"), "a") as log:
    log.write(json.dumps({**event, "plugin_root_env": os.environ.get("CLAUDE_PLUGIN_ROOT")}) + "\\n")
tool_input = event.get("tool_input", {})
if event["hook_event_name"] == "SessionStart":
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "SessionStart",
                                             "additionalContext": "Project rule: answer in French."}}))
elif "rm -rf" in tool_input.get("command", "") or tool_input.get("file_path", "").endswith(".env"):
    print("blocked by the kit guard: " + (tool_input.get("command") or tool_input["file_path"]), file=sys.stderr)
    sys.exit(2)
"""
GUARD_COMMAND = 'python3 "${CLAUDE_PLUGIN_ROOT}/hooks/guard.py"'
PATCH = """*** Begin Patch
*** Add File: notes.txt
+first note
*** Update File: app.py
@@
-print("old")
+print("new")
*** End Patch"""


def kit_plugin(parent: Path) -> Path:
    hooks = {
        "hooks": {
            "SessionStart": [{"matcher": "startup", "hooks": [{"type": "command", "command": GUARD_COMMAND}]}],
            "PreToolUse": [{"matcher": "Bash|Edit|Write", "hooks": [{"type": "command", "command": GUARD_COMMAND}]}],
            "PostToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": GUARD_COMMAND, "timeout": 30}]}
            ],
        }
    }
    return write_plugin(
        parent,
        "kit",
        {
            "hooks/hooks.json": hooks,
            "hooks/guard.py": GUARD,
            "commands/greet.md": "---\ndescription: Greet someone\nargument-hint: [name]\nallowed-tools: Bash(echo:*), Read\nmodel: haiku\n---\n"
            "Greet $ARGUMENTS warmly.\n",
            "skills/pdf/SKILL.md": "---\nname: pdf\ndescription: Fill in PDF forms\n---\nUse the pdf-fill steps.\n",
        },
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = git_init(tmp_path / "repo")
    (root / "app.py").write_text('print("old")\n')
    kit_plugin(root / ".agent" / "plugins")
    return root


def logged(repo: Path) -> list[dict]:
    path = repo / "log.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


def tool_outputs(request) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "tool"]


def tool_names(request) -> list[str]:
    return sorted(tool["function"]["name"] for tool in request.body.get("tools", []))


def user_texts(request) -> list[str]:
    return [m["content"] for m in request.body["messages"] if m["role"] == "user"]


async def test_session_start_hook_adds_context_with_the_plugin_root_exported(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    server.script(Reply(text="Bonjour"))
    await collect_events(session, "hello")
    [start] = logged(repo)
    assert start["hook_event_name"] == "SessionStart" and start["source"] == "startup"
    assert start["plugin_root_env"] == str((repo / ".agent" / "plugins" / "kit").resolve())
    texts = user_texts(server.requests[0])
    context = next(t for t in texts if "Project rule: answer in French." in t)
    assert context.startswith('<hook_context event="SessionStart">')
    assert texts.index(context) < texts.index("hello")


async def test_pre_tool_use_on_bash_blocks_and_the_model_reads_why(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    server.script(
        Reply(tool_calls=[ToolCall("shell", {"command": "rm -rf build"}), ToolCall("read_file", {"path": "app.py"})]),
        Reply(text="ok"),
    )
    await collect_events(session, "clean up")
    pre = [entry for entry in logged(repo) if entry["hook_event_name"] == "PreToolUse"]
    assert [(entry["tool_name"], entry["tool_input"]) for entry in pre] == [("Bash", {"command": "rm -rf build"})]
    blocked, read = tool_outputs(server.requests[1])
    assert "shell was not run: a PreToolUse hook blocked it." in blocked
    assert "blocked by the kit guard: rm -rf build" in blocked
    assert 'print("old")' in read  # Read does not match the hook's Bash|Edit|Write


async def test_post_tool_use_on_edit_write_sees_each_file_of_a_patch(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": PATCH})]), Reply(text="done"))
    await collect_events(session, "edit")
    assert (repo / "app.py").read_text() == 'print("new")\n'
    post = [entry for entry in logged(repo) if entry["hook_event_name"] == "PostToolUse"]
    views = {entry["tool_name"]: entry["tool_input"] for entry in post}
    assert views["Write"] == {"file_path": str(repo / "notes.txt"), "content": "first note\n"}
    assert views["Edit"]["file_path"] == str(repo / "app.py")
    assert views["Edit"]["new_string"] == 'print("new")' and views["Edit"]["old_string"] == 'print("old")'
    assert all(entry["tool_response"]["success"] for entry in post)


async def test_a_block_on_one_file_refuses_the_whole_patch(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    patch = "*** Begin Patch\n*** Add File: ok.txt\n+fine\n*** Add File: prod.env\n+SECRET=1\n*** End Patch"
    server.script(Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]), Reply(text="understood"))
    await collect_events(session, "write config")
    assert not (repo / "ok.txt").exists() and not (repo / "prod.env").exists()
    [output] = tool_outputs(server.requests[1])
    assert "apply_patch was not run" in output and f"blocked by the kit guard: {repo / 'prod.env'}" in output


async def test_namespaced_command_with_arguments_and_allowed_tools(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    server.script(Reply(text="Hi Ada"), Reply(text="Hi Bob"), Reply(text="plain"))
    await collect_events(session, "/kit:greet Ada")
    await collect_events(session, "/greet Bob")  # the plain name: no other command is called greet
    await collect_events(session, "hello")
    first, second, third = server.requests
    assert user_texts(first)[-1] == "Greet Ada warmly." and user_texts(second)[-1] == "Greet Bob warmly."
    assert tool_names(first) == tool_names(second) == ["read_file", "shell"]  # Bash(echo:*), Read
    assert first.body["model"] == "test-model"  # Claude's `haiku` means the session's model off Anthropic
    assert "apply_patch" in tool_names(third)  # for that command's turn only


async def test_plugin_skill_is_listed_and_its_body_injected_on_mention(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    server.script(Reply(text="filled"))
    await collect_events(session, "use $kit:pdf on form.pdf")
    texts = user_texts(server.requests[0])
    skills_list = next(t for t in texts if t.startswith("<skills"))
    assert "- kit:pdf: Fill in PDF forms (" in skills_list
    assert any(
        "Use the pdf-fill steps." in t and t.startswith("<skill")
        for t in texts[texts.index("use $kit:pdf on form.pdf") :]
    )


async def test_plugins_command_lists_what_each_plugin_contributed(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    events = await collect_events(session, "/plugins")
    [notice] = [e for e in events if isinstance(e, ev.Notice)]
    assert "kit 1.0.0  (repo: " in notice.text and "/kit:greet (also /greet)" in notice.text
    assert "hooks       SessionStart[startup], PreToolUse[Bash|Edit|Write], PostToolUse[Edit|Write]" in notice.text
    assert server.requests == []


async def test_a_plugin_agent_runs_through_task_with_its_claude_tools_and_hooks_see_task(server, repo, monkeypatch):
    write_plugin(
        repo / ".agent" / "plugins",
        "crew",
        {
            "agents/reviewer.md": "---\nname: reviewer\ndescription: Reviews code\ntools: Read, Grep\n---\nYou review code.",
            "hooks/hooks.json": hooks_json("PreToolUse", 'cat > "$CLAUDE_PROJECT_DIR/task.json"', "Task"),
        },
    )
    session = make_session(server, repo, monkeypatch)
    call = ToolCall("task", {"agent": "crew:reviewer", "description": "review app", "prompt": "Review app.py"})
    server.script(Reply(tool_calls=[call]), Reply(text="app.py looks fine"), Reply(text="reviewed"))
    events = await collect_events(session, "review it")
    parent, child, _ = server.requests
    assert "crew:reviewer" in json.dumps(parent.body["tools"])  # the task tool offers it
    assert tool_names(child) == ["grep", "read_file"] and "You review code." in json.dumps(child.body["messages"])
    assert "app.py looks fine" in tool_outputs(server.requests[2])[0]
    assert [e.final_message for e in events if isinstance(e, ev.SubagentFinished)] == ["app.py looks fine"]
    seen = json.loads((repo / "task.json").read_text())
    assert seen["tool_name"] == "Task"
    assert seen["tool_input"] == {
        "subagent_type": "crew:reviewer",
        "description": "review app",
        "prompt": "Review app.py",
    }


def test_exec_with_plugin_dir_warns_about_a_broken_manifest_and_still_runs_the_good_plugin(server, tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    plugins = tmp_path / "plugins"
    write_plugin(plugins, "shout", {"commands/loud.md": "---\nallowed-tools: Read\n---\nSay $ARGUMENTS loudly."})
    broken = write_plugin(plugins, "broken", {"commands/x.md": "X"}, manifest='{"name": "broken",')
    server.script(Reply(text="HELLO"))
    result = run_agent(
        ["exec", "--provider", "openai-chat", "-m", "test-model", "--plugin-dir", str(plugins), "/shout:loud hello"],
        cwd=work,
        env=provider_env(server, "openai-chat"),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "HELLO\n"
    assert f"{broken}/.claude-plugin/plugin.json: invalid JSON" in result.stderr
    assert user_texts(server.requests[0])[-1] == "Say hello loudly."
    assert tool_names(server.requests[0]) == ["read_file"]


def test_agent_plugin_list(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    plugin = write_plugin(
        tmp_path / "dev",
        "kit",
        {"hooks/hooks.json": hooks_json("Stop", "true"), ".mcp.json": {"mcpServers": {"db": {"command": "db"}}}},
    )
    result = run_agent(["plugin", "list", "--plugin-dir", str(plugin), "-c", 'plugins.disabled=["nothing"]'], cwd=work)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("kit 1.0.0  (--plugin-dir: ")
    assert "hooks       Stop" in result.stdout and "MCP servers db\n" in result.stdout


async def test_plugins_are_read_once_per_session_and_their_warnings_shown_once(server, repo, monkeypatch):
    import agent_cli.runtime as runtime

    write_plugin(repo / ".agent" / "plugins", "broken", {}, manifest="{")
    calls = []
    original = runtime.load_plugins_for
    monkeypatch.setattr(
        runtime, "load_plugins_for", lambda config, **kw: calls.append(config) or original(config, **kw)
    )
    session = make_session(server, repo, monkeypatch)
    assert len(calls) == 1
    server.script(Reply(text="one"), Reply(text="two"))
    first, second = await collect_events(session, "hi"), await collect_events(session, "again")
    assert sum("plugin manifest" in e.message for e in first if isinstance(e, ev.Warning)) == 1
    assert not any(isinstance(e, ev.Warning) for e in second)
    await session.aclose()
