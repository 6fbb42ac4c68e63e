"""The lean profile for small windows: the first request's size, a chat in 2k, a tool job in 4k,
and the tools behind tool_search / tool_call. Real Session, the fake server emulating the window."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.context.profile import LEAN_TOOLS, TOOL_CALL, TOOL_SEARCH
from tests import session_helpers
from tests.fake_server import FakeModelServer, Reply, ToolCall
from tests.session_helpers import collect_events
from tests.window_job import TASK, Job, write_data_files


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text("Run the tests with `make test`.\n")
    return root


def tool_names(rec) -> list[str]:
    return [tool["function"]["name"] for tool in rec.body.get("tools", [])]


def of(events, kind):
    return [event for event in events if isinstance(event, kind)]


async def first_request(repo, monkeypatch, window: int, *overrides: str):
    with FakeModelServer(context_window=window, fallback=lambda rec: Reply(text="hello")) as server:
        session = session_helpers.make_session(server, repo, monkeypatch, f"model_context_window={window}", *overrides)
        events = await collect_events(session, "hi")
        await session.aclose()
    assert of(events, ev.TurnComplete), events
    return server.requests[0], session


@pytest.mark.parametrize(("window", "share"), [(8_192, 4), (4_096, 2)])
async def test_the_first_request_fits_the_target_share_of_a_small_window(repo, monkeypatch, window, share):
    rec, session = await first_request(repo, monkeypatch, window)
    assert session.lean
    assert rec.input_tokens <= window // share, rec.input_tokens
    assert sorted(tool_names(rec)) == sorted([*LEAN_TOOLS, TOOL_SEARCH, TOOL_CALL])
    system = rec.body["messages"][0]["content"]
    assert "tool_search" in system and "## Mode: agent" in system


async def test_the_full_profile_is_kept_for_larger_windows_and_on_request(repo, monkeypatch):
    rec, session = await first_request(repo, monkeypatch, 32_000)
    assert not session.lean and "list_dir" in tool_names(rec) and TOOL_SEARCH not in tool_names(rec)
    rec, session = await first_request(repo, monkeypatch, 8_000, 'context_profile="full"')
    assert not session.lean and "memory_save" in tool_names(rec)
    rec, session = await first_request(repo, monkeypatch, 128_000, 'context_profile="lean"')
    assert session.lean and "list_dir" not in tool_names(rec)


async def test_a_2k_window_holds_a_chat(repo, monkeypatch):
    window = 2_048
    with FakeModelServer(context_window=window, fallback=lambda rec: Reply(text="Sure: " + "words " * 40)) as server:
        session = session_helpers.make_session(server, repo, monkeypatch, f"model_context_window={window}")
        for question in ("hi", "what does this repository do?", "and how do I run its tests?", "thanks"):
            events = await collect_events(session, question)
            assert of(events, ev.TurnComplete), [e for e in events if isinstance(e, (ev.Error, ev.TurnFailed))]
        await session.aclose()
    assert not any(rec.overflowed for rec in server.requests)
    assert server.requests[0].input_tokens <= window * 95 // 100 * 3 // 4  # room for the answer and more turns


async def test_a_four_step_tool_job_finishes_in_a_4k_window(repo, monkeypatch):
    window = 4_096
    files = write_data_files(repo, 4, 450)
    job = Job(files)
    with FakeModelServer(context_window=window, fallback=job) as server:
        session = session_helpers.make_session(server, repo, monkeypatch, f"model_context_window={window}")
        events = await collect_events(session, TASK)
        await session.aclose()
    assert of(events, ev.TurnComplete)[0].last_message == "finished after 4 files"
    assert [end.success for end in of(events, ev.ToolCallEnd)] == [True] * 4
    assert not any(rec.overflowed for rec in server.requests)
    assert max(rec.input_tokens for rec in server.requests) <= window


async def test_tools_behind_the_search_pair_are_found_and_run(repo, monkeypatch):
    with FakeModelServer(context_window=4_096) as server:
        server.script(
            Reply(tool_calls=[ToolCall(TOOL_SEARCH, {"query": "remember memory"})]),
            Reply(tool_calls=[ToolCall(TOOL_CALL, {"name": "memory_search", "arguments": {"query": "tests"}})]),
            Reply(tool_calls=[ToolCall(TOOL_CALL, {"name": "list_dri", "arguments": {}})]),
            Reply(text="done"),
        )
        session = session_helpers.make_session(server, repo, monkeypatch, "model_context_window=4096")
        events = await collect_events(session, "look it up")
        await session.aclose()
        requests = server.requests

    ends = of(events, ev.ToolCallEnd)
    assert [end.name for end in ends] == [TOOL_SEARCH, "memory_search", TOOL_CALL]
    assert "name: memory_search" in ends[0].output and "input_schema" in ends[0].output
    assert ends[1].success  # routed: run, approved and shown as the tool itself
    assert not ends[2].success and "no tool 'list_dri'" in ends[2].output
    assert all(json.dumps(rec.body["tools"]) == json.dumps(requests[0].body["tools"]) for rec in requests)


async def test_plan_mode_keeps_update_plan_in_the_lean_profile(repo, monkeypatch):
    rec, session = await first_request(repo, monkeypatch, 4_096, 'mode="plan"')
    assert session.lean
    names = tool_names(rec)
    assert "update_plan" in names and "shell" not in names and "apply_patch" not in names
    assert {"read_file", "grep"} <= set(names)
