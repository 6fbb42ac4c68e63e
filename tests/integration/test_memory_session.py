"""Memory inside a real Session: /memory, /status and /context, compaction, modes."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.context.fragments import MEMORIES
from agent_cli.items import Message
from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from tests.fake_server import Reply
from tests.session_helpers import collect_events, make_session

FACT = "Run the integration suite with make itest, it needs docker running"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    return root


def notice(events: list[ev.Event]) -> str:
    notices = [event.text for event in events if isinstance(event, ev.Notice)]
    assert notices, events
    return notices[-1]


def fragments(messages: list[dict]) -> list[str]:
    return [m["content"] for m in messages if m["role"] == "user" and MEMORIES.matches(m["content"])]


async def test_memory_command_adds_lists_searches_edits_and_forgets(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    assert notice(await collect_events(session, f"/memory add {FACT}")) == f"Saved p1 (project): {FACT}"
    assert notice(await collect_events(session, "/memory add --scope user I like terse answers")).startswith(
        "Saved u1 (user)"
    )
    assert notice(await collect_events(session, "/memory add --scope session this bug is in the parser")).startswith(
        "Saved s1"
    )
    listing = notice(await collect_events(session, "/memory"))
    assert listing.index("session (1)") < listing.index("project (1)") < listing.index("user (1)")
    assert "p1    " + FACT in listing
    assert notice(await collect_events(session, "/memory search docker integration")).strip().startswith("p1")
    assert notice(
        await collect_events(session, "/memory edit p1 Run the integration suite with make itest")
    ).startswith("Edited p1")
    assert notice(await collect_events(session, "/memory forget u1")) == "Forgot u1: I like terse answers"
    rejected = [e for e in await collect_events(session, "/memory forget u1") if isinstance(e, ev.InputRejected)]
    assert rejected and "no memory u1" in rejected[0].message
    refused = [
        e
        for e in await collect_events(session, "/memory add password: hunter2hunter2")
        if isinstance(e, ev.InputRejected)
    ]
    assert refused and "refused" in refused[0].message
    assert server.requests == []  # none of it reached the model


async def test_recalled_memories_show_in_context_and_status_and_survive_compaction(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, f"/memory add {FACT}")
    server.script(Reply(text="use make itest. " * 200), Reply(text="## Summary\nAsked about tests."), Reply(text="ok"))
    await collect_events(session, "how do I run the integration suite?")
    assert len(fragments(server.requests[0].body["messages"])) == 1

    usage = [e for e in await collect_events(session, "/context") if isinstance(e, ev.ContextUsage)][0]
    parts = {part.name: part.tokens for part in usage.parts}
    assert parts["memories"] > 0
    assert f"recalled into this context: {parts['memories']:,} tokens" in notice(
        await collect_events(session, "/status")
    )

    finished = [e for e in await collect_events(session, "/compact") if isinstance(e, ev.CompactionFinished)]
    assert finished and finished[0].applied
    summary_request = server.requests[1].body["messages"]
    assert fragments(summary_request) == []  # kept out of what the summary is written from
    memory_items = [i for i in session.history.items if isinstance(i, Message) and MEMORIES.matches(i.text)]
    assert len(memory_items) == 1 and "[p1]" in memory_items[0].text  # recalled again after the rebuild
    await collect_events(session, "and the integration suite again?")
    assert len(fragments(server.requests[2].body["messages"])) == 1  # not repeated
    server.assert_done()


async def test_memory_save_is_a_write_and_memory_search_is_read_only(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch, 'mode="ask"')
    names = [spec.name for spec in session.tool_specs()]
    assert "memory_search" in names and "memory_save" not in names
    off = make_session(server, repo, monkeypatch, "memory=false")
    assert not {"memory_save", "memory_search"} & {spec.name for spec in off.tool_specs()}
    assert off.memory is None
    rejected = [e for e in await collect_events(off, "/memory") if isinstance(e, ev.InputRejected)]
    assert rejected and "memory is off" in rejected[0].message


async def test_the_session_scope_is_restored_on_resume(server, repo, monkeypatch):
    session = make_session(server, repo, monkeypatch)
    server.script(Reply(text="ok"), Reply(text="still ok"))
    await collect_events(session, "/memory add --scope session the flaky test is test_upload_retry")
    await collect_events(session, "look at the flaky upload retry test")
    assert len(fragments(server.requests[0].body["messages"])) == 1
    path = session.rollout.path
    await session.aclose()
    resumed = restore(open_session(session.config, interactive=False), path)
    assert [m.text for m in resumed.memory.newest(["session"])["session"]] == ["the flaky test is test_upload_retry"]
    await collect_events(resumed, "the flaky upload retry test again")
    assert len(fragments(server.requests[1].body["messages"])) == 1  # restored, and not sent twice
    await resumed.aclose()
    other = make_session(server, repo, monkeypatch)
    assert other.memory.counts()["session"] == 0


async def test_recall_searches_with_the_words_typed_after_a_command_never_its_name_or_its_prompt(
    server, repo, monkeypatch
):
    session = make_session(server, repo, monkeypatch)
    await collect_events(session, "/memory add Run git init only inside scratch folders")  # matches the name "init"
    await collect_events(
        session, "/memory add Security holes and data loss bugs on the main path need a crash test"
    )  # the rubric's words
    await collect_events(session, "/memory add The SQL layer lives in db/queries.py")
    server.script(Reply(text="# Agents"), Reply(text="looks fine. " * 300), Reply(text="## Summary\nReviewed."))
    await collect_events(session, "/init")
    assert fragments(server.requests[0].body["messages"]) == []  # nothing typed after the name: nothing recalled
    await collect_events(session, "/review the SQL layer")
    [fragment] = fragments(server.requests[1].body["messages"])
    assert "[p3]" in fragment and "[p2]" not in fragment
    finished = [e for e in await collect_events(session, "/compact") if isinstance(e, ev.CompactionFinished)]
    assert finished and finished[0].applied
    [again] = [i.text for i in session.history.items if isinstance(i, Message) and MEMORIES.matches(i.text)]
    assert "[p3]" in again and "[p2]" not in again  # recalled again for the same words, not the review prompt
