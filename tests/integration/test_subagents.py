"""Subagents end to end: a parent session calls `task`, the child talks to the same fake server."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.commands.conversation import submit
from agent_cli.context.history import ABORTED_OUTPUT
from agent_cli.items import ToolOutput
from agent_cli.runtime import open_session
from agent_cli.session import Session
from agent_cli.session.resume import restore
from agent_cli.store.catalog import session_files
from agent_cli.store.rollout import load_session_file
from tests import session_helpers
from tests.fake_server import Reply, ToolCall
from tests.processes import gone

SECRET = "\n".join(f"zebra-quartz-{n}" for n in range(200))  # only the child reads it; never the parent


def make_session(server, tmp_path: Path, monkeypatch, *overrides: str, interactive: bool = False) -> Session:
    repo = tmp_path / "repo"
    repo.mkdir(exist_ok=True)
    (repo / "notes.txt").write_text(SECRET + "\n")
    base = ['sandbox_mode="danger-full-access"', "memory=false"]  # the tool lists below are the built-in ones
    return session_helpers.make_session(
        server, repo, monkeypatch, *base, *overrides, model="m", interactive=interactive
    )


def task(agent: str, prompt: str, description: str = "look around") -> ToolCall:
    return ToolCall("task", {"agent": agent, "description": description, "prompt": prompt})


async def turn(session: Session, text: str, stop_when=None, approve: bool = False) -> list[ev.Event]:
    events = []
    async for event in submit(session, text):
        events.append(event)
        if isinstance(event, ev.ApprovalRequest):
            event.future.set_result(ev.ApprovalDecision("approve" if approve else "deny"))
        if stop_when and stop_when(events):
            session.interrupt()
    return events


def tool_names(request) -> list[str]:
    return [tool["function"]["name"] for tool in request.body.get("tools", [])]


def text_of(request) -> str:
    return json.dumps(request.body["messages"])


def system_prompt(request) -> str:
    return request.body["messages"][0]["content"]


def finished(events) -> list[ev.SubagentFinished]:
    return [event for event in events if isinstance(event, ev.SubagentFinished)]


async def test_a_child_runs_its_tools_and_only_its_final_message_reaches_the_parent(server, tmp_path, monkeypatch):
    session = make_session(server, tmp_path, monkeypatch)
    server.script(
        Reply(tool_calls=[task("explore", "What is in notes.txt?")]),
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="notes.txt holds a repeated zebra word."),
        Reply(text="The notes are about zebras."),
    )
    events = await turn(session, "what are the notes about?")
    assert isinstance(events[-1], ev.TurnComplete) and events[-1].last_message == "The notes are about zebras."
    parent_first, child_first, child_second, parent_second = server.requests

    # The child: its own system prompt and history, the explore agent's tools only.
    assert tool_names(parent_first) == [
        "shell",
        "read_file",
        "grep",
        "list_dir",
        "apply_patch",
        "update_plan",
        "shell_output",
        "shell_kill",
        "web_fetch",
        "task",
    ]
    assert tool_names(child_first) == ["read_file", "grep", "list_dir"]
    assert system_prompt(child_first).startswith("You are `explore`, a subagent")
    assert child_first.body["messages"][-1] == {"role": "user", "content": "What is in notes.txt?"}
    assert "what are the notes about?" not in text_of(child_first)
    assert "zebra-quartz-199" in text_of(child_second)
    inner = [e.event for e in events if isinstance(e, ev.SubagentEvent)]
    assert [type(e).__name__ for e in inner if isinstance(e, (ev.ToolCallBegin, ev.ToolCallEnd))] == [
        "ToolCallBegin",
        "ToolCallEnd",
    ]

    # The parent: the final message and the transcript's path, nothing the child read.
    assert "zebra-quartz" not in text_of(parent_second)
    output = parent_second.body["messages"][-1]
    assert output["role"] == "tool" and output["content"].startswith("notes.txt holds a repeated zebra word.")
    (done,) = finished(events)
    assert done.status == "completed" and done.agent == "explore" and done.description == "look around"
    assert done.transcript in output["content"]

    # Tokens: the child's count in the session totals, not in the parent's context.
    assert done.usage.input_tokens == child_first.input_tokens + child_second.input_tokens
    parents = sum(request.input_tokens for request in (parent_first, parent_second))
    assert session.total_usage.input_tokens == parents + done.usage.input_tokens
    assert session.last_usage.input_tokens == parent_second.input_tokens
    assert parent_second.input_tokens - parent_first.input_tokens < 200  # the call and a short answer

    # The transcript sits beside the parent's session file and is not listed as a session.
    transcript = Path(done.transcript)
    assert transcript.parent == session.rollout.path.with_suffix(".agents")
    outputs = [item.output for item in load_session_file(transcript).items if isinstance(item, ToolOutput)]
    assert len(outputs) == 1 and "zebra-quartz-199" in outputs[0]
    assert [path for path, _, _ in session_files(session.config.agent_home)] == [session.rollout.path]
    server.assert_done()


async def test_a_child_cannot_write_when_its_agent_only_reads(server, tmp_path, monkeypatch):
    session = make_session(server, tmp_path, monkeypatch)
    patch = "*** Begin Patch\n*** Add File: made.txt\n+x\n*** End Patch"
    server.script(
        Reply(tool_calls=[task("explore", "Create made.txt")]),
        Reply(tool_calls=[ToolCall("apply_patch", {"patch": patch})]),
        Reply(text="I cannot write files."),
        Reply(text="ok"),
    )
    events = await turn(session, "make a file through explore")
    (refused,) = [e.event for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.ToolCallEnd)]
    assert not refused.success and "unknown tool 'apply_patch'" in refused.output
    assert not (session.config.cwd / "made.txt").exists()
    assert finished(events)[0].final_message == "I cannot write files."


@pytest.mark.parametrize(
    ("mode", "depth", "agent", "expected"),
    [
        (
            "agent",
            1,
            "general",
            [
                "shell",
                "read_file",
                "grep",
                "list_dir",
                "apply_patch",
                "update_plan",
                "shell_output",
                "shell_kill",
                "web_fetch",
            ],
        ),
        (
            "agent",
            2,
            "general",
            [
                "shell",
                "read_file",
                "grep",
                "list_dir",
                "apply_patch",
                "update_plan",
                "shell_output",
                "shell_kill",
                "web_fetch",
                "task",
            ],
        ),
        ("agent", 2, "explore", ["read_file", "grep", "list_dir"]),
        ("ask", 1, "general", ["read_file", "grep", "list_dir"]),  # never more than the parent's mode allows
    ],
)
async def test_a_child_gets_no_more_tools_than_its_parent_and_depth_allow(
    server, tmp_path, monkeypatch, mode, depth, agent, expected
):
    session = make_session(server, tmp_path, monkeypatch, f'mode="{mode}"', f"max_agent_depth={depth}")
    server.script(Reply(tool_calls=[task(agent, "look")]), Reply(text="seen"), Reply(text="ok"))
    await turn(session, "go")
    assert tool_names(server.requests[1]) == expected
    server.assert_done()


def router(barrier=None):
    """Answers the parent and two children (TASK-A, TASK-B) in whatever order they ask.

    With a barrier, each child's first request waits until the other child's has arrived too:
    that only completes when the children really run at the same time."""

    def answer(request) -> Reply:
        text = text_of(request)
        if "task" in tool_names(request):  # the parent
            return Reply(text="both done")
        name = "A" if "TASK-A" in text else "B"
        if request.body["messages"][-1]["role"] == "tool":
            return Reply(text=f"answer {name}")
        if barrier is not None:
            barrier.wait()
        return Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})])

    return answer


async def test_two_children_run_in_parallel(server, tmp_path, monkeypatch):
    import threading

    session = make_session(server, tmp_path, monkeypatch)
    server.script(Reply(tool_calls=[task("explore", "TASK-A", "first"), task("explore", "TASK-B", "second")]))
    server.fallback = router(threading.Barrier(2, timeout=10))
    events = await turn(session, "two at once")
    assert events[-1] == ev.TurnComplete("both done")
    assert sorted(done.final_message for done in finished(events)) == ["answer A", "answer B"]
    outputs = [m["content"] for m in server.requests[-1].body["messages"] if m["role"] == "tool"]
    assert [output.split("\n")[0] for output in outputs] == ["answer A", "answer B"]  # in call order
    assert not server.errors


async def test_max_parallel_agents_1_runs_children_one_after_the_other(server, tmp_path, monkeypatch):
    session = make_session(server, tmp_path, monkeypatch, "max_parallel_agents=1")
    server.script(Reply(tool_calls=[task("explore", "TASK-A"), task("explore", "TASK-B")]))
    server.fallback = router()
    await turn(session, "two, one at a time")
    children = ["A" if "TASK-A" in text_of(request) else "B" for request in server.requests[1:-1]]
    assert children in (["A", "A", "B", "B"], ["B", "B", "A", "A"])


async def test_interrupting_the_parent_stops_every_child(server, tmp_path, monkeypatch):
    session = make_session(server, tmp_path, monkeypatch)

    def child(request) -> Reply:
        return Reply(tool_calls=[ToolCall("shell", {"command": "echo pid=$$; exec sleep 30"})])

    server.script(Reply(tool_calls=[task("general", "TASK-A"), task("general", "TASK-B")]), child, child)

    def printed(events) -> list[str]:  # each child's shell printed its PID
        deltas = [
            e.event.text for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.ToolOutputDelta)
        ]
        return re.findall(r"pid=(\d+)", "".join(deltas))

    events = await turn(session, "run two slow things", stop_when=lambda events: len(printed(events)) == 2)
    assert isinstance(events[-1], ev.TurnAborted) and "2 running tool call(s) stopped" in events[-1].reason
    assert [done.status for done in finished(events)] == ["interrupted", "interrupted"]
    outputs = [item for item in session.history.items if isinstance(item, ToolOutput)]
    assert [output.output for output in outputs] == [ABORTED_OUTPUT, ABORTED_OUTPUT]
    for pid in printed(events):
        assert await gone(int(pid))  # killed (a zombie until reaped counts as gone)
    for done in finished(events):  # each child's own transcript records its call as aborted too
        items = load_session_file(Path(done.transcript)).items
        assert [i.output for i in items if isinstance(i, ToolOutput)] == [ABORTED_OUTPUT]


async def test_resuming_the_parent_shows_the_childs_result_not_its_internals(server, tmp_path, monkeypatch):
    from agent_cli.store.replay import replay_events

    session = make_session(server, tmp_path, monkeypatch)
    server.script(
        Reply(tool_calls=[task("explore", "What is in notes.txt?")]),
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="zebra words"),
        Reply(text="The notes are about zebras."),
    )
    await turn(session, "what are the notes about?")
    await session.aclose()

    restored = restore(open_session(session.config, interactive=False), session.rollout.path)
    shown = replay_events(list(restored.history.items))
    calls = [e for e in shown if isinstance(e, (ev.ToolCallBegin, ev.ToolCallEnd))]
    assert [(type(e).__name__, e.name) for e in calls] == [("ToolCallBegin", "task"), ("ToolCallEnd", "task")]
    assert calls[1].output.startswith("zebra words")
    server.script(Reply(text="still zebras"))
    await turn(restored, "and now?")
    assert "zebra words" in text_of(server.requests[-1]) and "zebra-quartz" not in text_of(server.requests[-1])


async def test_hooks_see_the_agent_and_subagent_stop_fires(server, isolated_home, tmp_path, monkeypatch):
    log = tmp_path / "hooks.log"
    (isolated_home / "config.toml").write_text(
        f'[[hooks.PreToolUse]]\ncommand = "cat >> {log}; echo >> {log}"\n'
        f'[[hooks.SubagentStop]]\ncommand = "cat >> {log}; echo >> {log}"\n'
    )
    session = make_session(server, tmp_path, monkeypatch)
    server.script(
        Reply(tool_calls=[task("explore", "read it")]),
        Reply(tool_calls=[ToolCall("read_file", {"path": "notes.txt"})]),
        Reply(text="read"),
        Reply(text="ok"),
    )
    await turn(session, "go")
    parent_call, child_call, stop = [json.loads(line) for line in log.read_text().splitlines() if line.strip()]
    assert parent_call["tool_name"] == "task" and "agent" not in parent_call
    assert child_call["tool_name"] == "read_file" and child_call["agent"] == "explore"
    assert stop["hook_event_name"] == "SubagentStop" and stop["agent"] == "explore"
    assert stop["last_assistant_message"] == "read" and stop["session_id"] == session.id


async def test_a_childs_approval_is_asked_in_the_parents_ui_with_its_name(server, tmp_path, monkeypatch):
    session = make_session(server, tmp_path, monkeypatch, 'approval_policy="untrusted"', interactive=True)
    server.script(
        Reply(tool_calls=[task("general", "make a file")]),
        Reply(tool_calls=[ToolCall("shell", {"command": "touch made-by-child"})]),
        Reply(text="made"),
        Reply(text="ok"),
    )
    events = await turn(session, "go", approve=True)
    (request,) = [e for e in events if isinstance(e, ev.ApprovalRequest)]
    assert request.agent == "general" and request.summary == "touch made-by-child"
    assert (session.config.cwd / "made-by-child").exists()


async def test_a_plugins_agent_is_offered_under_its_namespace(server, tmp_path, monkeypatch):
    from tests.plugin_fixtures import write_plugin

    agent = "---\nname: reviewer\ndescription: Reviews code.\ntools: Read, Grep\n---\nReview it."
    write_plugin(tmp_path / "repo" / ".agent" / "plugins", "kit", {"agents/reviewer.md": agent})
    session = make_session(server, tmp_path, monkeypatch)
    server.script(Reply(tool_calls=[task("kit:reviewer", "review")]), Reply(text="looks fine"), Reply(text="ok"))
    await turn(session, "review it")
    (spec,) = [tool for tool in server.requests[0].body["tools"] if tool["function"]["name"] == "task"]
    assert "- kit:reviewer: Reviews code." in spec["function"]["description"]
    assert tool_names(server.requests[1]) == ["read_file", "grep"]
    assert "You are `kit:reviewer`" in system_prompt(server.requests[1]) and "Review it." in system_prompt(
        server.requests[1]
    )
    assert session.agents.get("kit:reviewer").source == "plugin kit"


async def test_a_subagent_stop_hook_can_keep_the_child_working(server, isolated_home, tmp_path, monkeypatch):
    marker = tmp_path / "blocked-once"
    command = f"test -e {marker} || {{ touch {marker}; echo 'check the tests too' >&2; exit 2; }}"
    (isolated_home / "config.toml").write_text(f'[[hooks.SubagentStop]]\ncommand = "{command}"\n')
    session = make_session(server, tmp_path, monkeypatch)
    server.script(
        Reply(tool_calls=[task("explore", "look")]),
        Reply(text="first answer"),
        Reply(text="answer after checking the tests"),
        Reply(text="ok"),
    )
    events = await turn(session, "go")
    assert finished(events)[0].final_message == "answer after checking the tests"
    assert text_of(server.requests[2]).count("Do not stop yet. check the tests too") == 1
    assert "first answer" in text_of(server.requests[2])  # the child kept its own history
    assert "first answer" not in text_of(server.requests[3])  # the parent got the last answer only


async def test_a_child_reuses_its_parents_plugins_and_leaves_what_it_borrowed_open(server, tmp_path, monkeypatch):
    import agent_cli.runtime as runtime

    reads = []
    original = runtime.load_plugins_for
    monkeypatch.setattr(
        runtime, "load_plugins_for", lambda config, **kw: reads.append(config) or original(config, **kw)
    )
    session = make_session(server, tmp_path, monkeypatch, "shell_snapshot=true")
    server.script(
        Reply(tool_calls=[task("explore", "What is in notes.txt?")]),
        Reply(text="zebras."),
        Reply(text="The notes are about zebras."),
    )
    sdk_clients = []

    def note_the_connections(seen) -> bool:
        if isinstance(seen[-1], ev.SubagentEvent) and not sdk_clients:
            sdk_clients.append(session.client._sdk_client)  # made with the parent's first request
        return False

    events = await turn(session, "what are the notes about?", stop_when=note_the_connections)
    assert [done.status for done in finished(events)] == ["completed"]
    assert len(reads) == 1  # the parent's; the child used them, never reading the plugins again
    # The child ran on the parent's model with the parent's client and shell snapshot, and closed
    # neither: the parent's last request went out on the connections of its first.
    assert sdk_clients[0] is not None and session.client._sdk_client is sdk_clients[0]
    assert session.shell_snapshot._closed is False
    await session.aclose()
    assert session.shell_snapshot._closed is True
