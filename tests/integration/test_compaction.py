"""Compaction end to end: a real Session, the real model clients and the fake server's small window.

The fake server counts a request's tokens as ceil(body bytes / 4) and answers anything larger
than its window with the provider's real context-length error, like the real APIs do.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.context.compact import FALLBACK_NOTE
from agent_cli.items import Message
from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from tests import session_helpers
from tests.fake_server import FakeModelServer, Reply, ToolCall
from tests.session_helpers import collect_events
from tests.window_job import conversation, texts

# Auto-compaction starts at 85% of 95% of it (14,535 tokens): two ~4,000-token files fit beside
# the fixed prompt (~4,000), a third crosses the threshold, and the summarizing request (the
# history at that point) still fits in the window.
WINDOW = 18_000
COMPACT_MARK = "Your context window is about to be reset"
TASK = "TASK-7781: read every data file in order and report the longest line of each."
FOLLOW_UP = "FOLLOW-UP-4410: now read the remaining files too, same report."
MODELS = {"openai-chat": "test-model", "anthropic": "claude-test", "openai": "test-model"}


# --- helpers ------------------------------------------------------------------------------------


def request_text(rec) -> str:
    return "\n".join(texts(message) for message in conversation(rec))


def is_summary_request(rec) -> bool:
    messages = conversation(rec)
    return bool(messages) and COMPACT_MARK in texts(messages[-1])


class Job:
    """The scripted model: read ``files`` one per step, then answer; summarize when asked."""

    def __init__(self, files: list[str], summary: Reply | None = None):
        self.files = files
        self.step = 0
        self.summary = summary

    def __call__(self, rec) -> Reply:
        if is_summary_request(rec):
            return self.summary or Reply(text=f"## Active task\nRead the data files. Done: {self.step} file(s).")
        if self.step < len(self.files):
            self.step += 1
            return Reply(tool_calls=[ToolCall("read_file", {"path": self.files[self.step - 1]})])
        return Reply(text=f"finished after {self.step} files")

    def add(self, files: list[str]) -> None:
        self.files += files


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "AGENTS.md").write_text("Project rule: never edit generated files.\n")
    for i in range(12):  # ~4,000 tokens each on the wire: a few of them overflow the window
        lines = "".join(f"record {n:03d} of data{i}: " + "lorem ipsum dolor sit amet " * 2 + "\n" for n in range(200))
        (root / f"data{i}.txt").write_text(lines)
    monkeypatch.setenv("AGENT_HOME", str(tmp_path / "home"))
    return root


def make_session(server: FakeModelServer, repo: Path, monkeypatch, provider: str = "openai-chat", *overrides: str):
    # The outputs here are ~4,000 tokens on purpose: set as a user would, the limit is not cut to
    # an eighth of the small window.
    return session_helpers.make_session(
        server,
        repo,
        monkeypatch,
        f"model_context_window={WINDOW}",
        "tool_output_token_limit=10000",
        *overrides,
        provider=provider,
        model=MODELS[provider],
    )


def of(events: list[ev.Event], kind: type) -> list:
    return [event for event in events if isinstance(event, kind)]


def reported_usage(server: FakeModelServer) -> tuple[int, int]:
    """Input and output tokens the server reported over all answered requests."""
    answered = [rec for rec in server.requests if rec.reply is not None and not rec.reply.is_fault]
    usages = [rec.reply.resolved_usage(rec.input_tokens) for rec in answered]
    return sum(u.input_tokens for u in usages), sum(u.output_tokens for u in usages)


def assert_usage_monotonic_and_matching(events: list[ev.Event], server: FakeModelServer) -> None:
    counts = of(events, ev.TokenCount)
    totals = [(c.total.input_tokens, c.total.output_tokens) for c in counts]
    assert totals == sorted(totals), "session totals must never go down"
    assert totals[-1] == reported_usage(server)


# --- a long job ---------------------------------------------------------------------------------


@pytest.mark.parametrize("provider", ["openai-chat", "anthropic", "openai"])
async def test_long_job_compacts_repeatedly_and_never_loses_the_task(repo, monkeypatch, provider):
    job = Job([f"data{i}.txt" for i in range(6)])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch, provider)
        first = await collect_events(session, TASK)
        job.add([f"data{i}.txt" for i in range(6, 10)])
        second = await collect_events(session, FOLLOW_UP)

    events = first + second
    assert of(first, ev.TurnComplete)[0].last_message == "finished after 6 files"
    assert of(second, ev.TurnComplete)[0].last_message == "finished after 10 files"
    finished = of(events, ev.CompactionFinished)
    assert len(finished) >= 3 and all(f.applied and f.trigger == "auto" and not f.fallback for f in finished)
    assert all(f.tokens_after < f.tokens_before and f.items_after < f.items_before for f in finished)
    # Auto-compaction kept every request inside the window: the provider never refused one.
    assert not any(rec.overflowed for rec in server.requests)
    assert max(rec.input_tokens for rec in server.requests) <= WINDOW

    # The task is in every request verbatim, and so is the latest message once it was sent.
    texts_sent = [request_text(rec) for rec in server.requests]
    turn_two = next(i for i, text in enumerate(texts_sent) if FOLLOW_UP in text)
    assert turn_two > 0 and all(TASK in text for text in texts_sent)
    assert all(FOLLOW_UP in text for text in texts_sent[turn_two:])
    after = [rec for i, rec in enumerate(server.requests) if i and is_summary_request(server.requests[i - 1])]
    assert after and all("Another language model worked on this task" in request_text(rec) for rec in after)
    assert all("never edit generated files" in request_text(rec) for rec in after)  # AGENTS.md re-injected

    assert any("less accurate" in w.message for w in of(events, ev.Warning))
    assert_usage_monotonic_and_matching(events, server)
    last_count = of(events, ev.TokenCount)[-1]
    assert last_count.context_window == WINDOW * 95 // 100
    assert last_count.counting_method == "estimate (bytes/4)"


async def test_summarizing_request_continues_the_conversation(repo, monkeypatch):
    job = Job([f"data{i}.txt" for i in range(4)])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch)
        await collect_events(session, TASK)

    requests = server.requests
    summaries = [i for i, rec in enumerate(requests) if is_summary_request(rec)]
    assert summaries
    for i in summaries:
        previous, summarizing = requests[i - 1].body, requests[i].body
        old = previous["messages"]
        # Same system prompt and tools; the old messages are the byte-identical prefix.
        assert summarizing["messages"][0] == old[0] and summarizing["messages"][0]["role"] == "system"
        assert json.dumps(summarizing["tools"]) == json.dumps(previous["tools"])
        assert json.dumps(summarizing["messages"][: len(old)]) == json.dumps(old)
        assert summarizing["messages"][-1]["role"] == "user"
        assert len(summarizing["messages"]) == len(old) + 3  # the call, its output, the prompt


async def test_overflow_is_recovered_and_the_summarizing_request_trimmed(repo, monkeypatch):
    # The config believes in a 64k window, the server has 18k: requests really overflow.
    job = Job([f"data{i}.txt" for i in range(5)])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch, "openai-chat", "model_context_window=64000")
        events = await collect_events(session, TASK)

    assert of(events, ev.TurnComplete)[0].last_message == "finished after 5 files"
    finished = of(events, ev.CompactionFinished)
    assert finished and all(f.trigger == "overflow" and f.applied for f in finished)
    assert any(f.trimmed > 0 for f in finished)
    overflowed_summaries = [rec for rec in server.requests if rec.overflowed and is_summary_request(rec)]
    assert overflowed_summaries, "the summarizing request itself should have overflowed first"
    answered_summaries = [rec for rec in server.requests if is_summary_request(rec) and not rec.overflowed]
    for rec in answered_summaries:
        assert TASK in request_text(rec)  # trimming never drops the task
        assert rec.input_tokens <= WINDOW
    assert_usage_monotonic_and_matching(events, server)


async def test_failing_summarizer_falls_back_to_head_and_tail(repo, monkeypatch):
    job = Job([f"data{i}.txt" for i in range(4)], summary=Reply.http_error(400, message="summaries are broken"))
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch)
        events = await collect_events(session, TASK)

    assert of(events, ev.TurnComplete)[0].last_message == "finished after 4 files"
    finished = of(events, ev.CompactionFinished)
    assert finished and all(f.fallback and f.applied for f in finished)
    assert any("Summarizing failed" in w.message for w in of(events, ev.Warning))
    summary = [item for item in session.history.items if isinstance(item, Message) and FALLBACK_NOTE in item.text]
    assert len(summary) == 1
    assert TASK in summary[0].text and "record 199 of data" in summary[0].text  # head and tail kept
    assert not any(rec.overflowed for rec in server.requests)


@pytest.mark.parametrize(
    "answer",
    [Reply(tool_calls=[ToolCall("read_file", {"path": "data0.txt"})]), Reply(reasoning="I should summarize.")],
    ids=["a tool call", "reasoning only"],
)
async def test_a_summarizer_that_answers_without_text_falls_back_rather_than_keeping_an_empty_summary(
    repo, monkeypatch, answer
):
    # The summarizing request offers the tools (for the cached prefix), so a model may call one.
    job = Job([f"data{i}.txt" for i in range(4)], summary=answer)
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch)
        events = await collect_events(session, TASK)

    finished = of(events, ev.CompactionFinished)
    assert finished and all(f.fallback and f.applied and f.summary.strip() for f in finished)
    assert any("no summary" in w.message for w in of(events, ev.Warning))
    summary = [item for item in session.history.items if isinstance(item, Message) and FALLBACK_NOTE in item.text]
    assert len(summary) == 1 and TASK in summary[0].text


# --- things that cannot fit ---------------------------------------------------------------------


async def test_a_message_larger_than_the_window_fails_cleanly(repo, monkeypatch):
    with FakeModelServer(context_window=WINDOW) as server:
        session = make_session(server, repo, monkeypatch)
        server.script(Reply(text="small answer"))
        events = await collect_events(session, "x" * (WINDOW * 4 + 100))
        assert server.requests == []  # nothing sent
        errors = of(events, ev.Error)
        assert len(errors) == 1 and errors[0].fatal and "Shorten it" in errors[0].message
        assert of(events, ev.TurnFailed) and not of(events, ev.TurnComplete)
        assert of(events, ev.TokenCount)[-1].percent_left == 0  # the window shows as full
        # The session is still usable.
        again = await collect_events(session, "a small question")
        assert of(again, ev.TurnComplete)[0].last_message == "small answer"


async def test_a_request_that_can_never_fit_fails_the_turn_with_a_clear_message(repo, monkeypatch):
    # The server's window is smaller than the system prompt and tools alone.
    with FakeModelServer(context_window=1_000) as server:
        session = make_session(server, repo, monkeypatch)
        events = await collect_events(session, TASK)

    assert not of(events, ev.TurnComplete)
    assert len(of(events, ev.TurnFailed)) == 1
    fatal = [e for e in of(events, ev.Error) if e.fatal]
    assert len(fatal) == 1 and "does not fit in the model's context window" in fatal[0].message
    assert "internal error" not in fatal[0].message
    assert of(events, ev.TokenCount)[-1].percent_left == 0
    # One compaction was tried (it may shrink a little: the window learned from the error cuts
    # the skills list), and the retry still overflowed.
    assert len(of(events, ev.CompactionFinished)) == 1
    assert session.window.tokens == 1_000  # learned from the server's error
    assert all(rec.overflowed for rec in server.requests)


# --- manual compaction --------------------------------------------------------------------------


async def test_manual_compact_with_focus(repo, monkeypatch):
    job = Job(["data0.txt", "data1.txt"])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch, "openai-chat", "auto_compact=false")
        await collect_events(session, TASK)
        before = session.history.items
        events = [event async for event in session.compact("the longest lines")]
        summarizing = server.requests[-1]

    assert is_summary_request(summarizing)
    assert "the longest lines" in texts(conversation(summarizing)[-1])
    assert [type(e) for e in events[:1]] == [ev.CompactionStarted] and events[0].trigger == "manual"
    finished = of(events, ev.CompactionFinished)[0]
    assert finished.applied and finished.items_before == len(before) and finished.items_after == len(session.history)
    assert not of(events, ev.TextDelta) and not of(events, ev.AgentMessage)  # the summary is not chat
    items = session.history.items
    assert items[-1].text.endswith("Done: 2 file(s).")
    assert [i.text for i in items if isinstance(i, Message) and i.text == TASK] == [TASK]
    assert session.compaction.count == 1


async def test_compaction_that_would_grow_the_context_keeps_the_history(repo, monkeypatch):
    long_summary = Reply(text="## Active task\n" + "very detailed notes " * 400)
    with FakeModelServer(context_window=WINDOW) as server:
        session = make_session(server, repo, monkeypatch)
        server.script(Reply(text="hello"), long_summary)
        await collect_events(session, "hi")
        before = session.history.items
        events = [event async for event in session.compact()]

    finished = of(events, ev.CompactionFinished)[0]
    assert not finished.applied and finished.items_after == finished.items_before
    assert session.history.items == before
    assert any("previous history was kept" in w.message for w in of(events, ev.Warning))
    assert session.compaction.count == 0


async def test_interrupting_a_compaction_keeps_the_history(repo, monkeypatch):
    with FakeModelServer(context_window=WINDOW) as server:
        session = make_session(server, repo, monkeypatch)
        server.script(Reply(text="hello"), Reply(text="slow summary " * 50, chunk_size=4, delay=0.05))
        await collect_events(session, "hi")
        before = session.history.items
        events = []
        async for event in session.compact():
            events.append(event)
            if isinstance(event, ev.CompactionStarted):
                asyncio.get_running_loop().call_later(0.2, session.interrupt)
    assert of(events, ev.TurnAborted) and not of(events, ev.CompactionFinished)
    assert session.history.items == before
    assert not session.running


async def test_nothing_to_compact_in_a_new_session(repo, monkeypatch):
    with FakeModelServer(context_window=WINDOW) as server:
        session = make_session(server, repo, monkeypatch)
        events = [event async for event in session.compact()]
        assert server.requests == []
    assert [type(e) for e in events] == [ev.Notice]


async def test_no_compaction_loop_when_compacting_cannot_get_below_the_threshold(repo, monkeypatch):
    # A threshold below the fixed prompt: every request is "over", but compacting cannot help.
    job = Job(["data0.txt", "data1.txt"])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch, "openai-chat", "model_auto_compact_token_limit=1500")
        events = await collect_events(session, TASK)

    assert of(events, ev.TurnComplete)[0].last_message == "finished after 2 files"
    assert len([rec for rec in server.requests if is_summary_request(rec)]) == 1
    assert [f.applied for f in of(events, ev.CompactionFinished)] == [False]


async def test_auto_compact_off(repo, monkeypatch):
    job = Job([f"data{i}.txt" for i in range(2)])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch, "openai-chat", "auto_compact=false")
        assert session.auto_compact_limit is None
        events = await collect_events(session, TASK)
    assert of(events, ev.TurnComplete) and not of(events, ev.CompactionStarted)


async def test_pre_compact_hook_runs_and_its_context_survives(repo, monkeypatch):
    record = repo.parent / "hook-input.json"
    hook = (
        f'cat > {record}; echo \'{{"hookSpecificOutput": {{"additionalContext": "HOOK-NOTE: tests live in tests/"}}}}\''
    )
    (repo / ".agent").mkdir()
    (repo / ".agent" / "config.toml").write_text(f"[[hooks.PreCompact]]\ncommand = {json.dumps(hook)}\n")
    with FakeModelServer(context_window=WINDOW) as server:
        session = make_session(server, repo, monkeypatch)
        server.script(Reply(text="hello"), Reply(text="## Active task\nsay hello"), Reply(text="again"))
        await collect_events(session, "hi")
        [event async for event in session.compact("greetings")]
        await collect_events(session, "once more")
        last_request = request_text(server.requests[-1])

    payload = json.loads(record.read_text())
    assert payload["hook_event_name"] == "PreCompact" and payload["trigger"] == "manual"
    assert payload["custom_instructions"] == "greetings"
    assert "HOOK-NOTE: tests live in tests/" in last_request


def test_agent_exec_reports_compaction_in_progress_and_json(repo, tmp_path):
    import os
    import subprocess
    import sys

    job = Job([f"data{i}.txt" for i in range(4)])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        env = {
            **os.environ,
            "AGENT_HOME": str(tmp_path / "home"),
            "NO_COLOR": "1",
            "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": "test-key",
        }
        argv = [
            sys.executable,
            "-m",
            "agent_cli",
            "exec",
            "--provider",
            "openai-chat",
            "-m",
            "test-model",
            "-c",
            f"model_context_window={WINDOW}",
        ]
        text = subprocess.run(
            [*argv, TASK], cwd=repo, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60
        )
        job.step = 0
        as_json = subprocess.run(
            [*argv, "--json", TASK],
            cwd=repo,
            env=env,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )

    assert text.returncode == 0, text.stderr
    assert text.stdout.strip() == "finished after 4 files"
    assert "compacting the conversation (auto)" in text.stderr and "compacted " in text.stderr
    assert as_json.returncode == 0, as_json.stderr
    items = [json.loads(line).get("item", {}) for line in as_json.stdout.splitlines()]
    compactions = [item for item in items if item.get("type") == "compaction"]
    assert compactions and compactions[0]["trigger"] == "auto" and compactions[0]["applied"] is True
    assert compactions[0]["tokens_after"] < compactions[0]["tokens_before"]


async def test_a_mode_switch_survives_compaction_in_the_system_prompt(repo, monkeypatch):
    job = Job(["data0.txt"])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch)
        await collect_events(session, TASK)
        await collect_events(session, "/mode ask")
        [event async for event in session.compact(None)]
        await collect_events(session, "what did you find?")
        after = server.requests[-1].body

    system = after["messages"][0]["content"]
    assert "## Mode: ask" in system  # the appended /mode note was dropped; the prompt now says it
    assert {tool["function"]["name"] for tool in after["tools"]} == {
        "read_file",
        "grep",
        "list_dir",
        "memory_search",
        "task",
    }


async def test_the_compaction_count_survives_a_resume(repo, monkeypatch):
    job = Job(["data0.txt", "data1.txt"])
    with FakeModelServer(context_window=WINDOW, fallback=job) as server:
        session = make_session(server, repo, monkeypatch, "openai-chat", "auto_compact=false")
        await collect_events(session, TASK)
        await collect_events(session, "/compact")
        job.add(["data2.txt"])
        await collect_events(session, FOLLOW_UP)
        events = await collect_events(session, "/compact")
        assert session.compaction.count == 2 and of(events, ev.Warning)  # "compacted 2 times"
        await session.aclose()

        resumed = restore(open_session(session.config, interactive=False), session.rollout.path)
        assert resumed.compaction.count == 2
        assert "compacted 2 times" in resumed.resumed.events()[0].text
        job.add(["data3.txt"])
        await collect_events(resumed, FOLLOW_UP)
        events = await collect_events(resumed, "/compact")
        await resumed.aclose()

    assert of(events, ev.CompactionFinished)[0].applied
    assert any("compacted 3 times" in warning.message for warning in of(events, ev.Warning))


async def test_a_compaction_that_could_not_help_is_not_retried_after_a_resume(repo, monkeypatch):
    # A threshold below the fixed prompt and initial context: compacting cannot get under it, so the session stops trying (an actual overflow would still be recovered).
    job = Job([])
    with FakeModelServer(fallback=job) as server:
        session = make_session(
            server, repo, monkeypatch, "openai-chat", "model_context_window=4000", "model_auto_compact_token_limit=800"
        )
        first = await collect_events(session, TASK)
        second = await collect_events(session, FOLLOW_UP)
        await session.aclose()
        resumed = restore(open_session(session.config, interactive=False), session.rollout.path)
        third = await collect_events(resumed, FOLLOW_UP)
        await resumed.aclose()

    assert [finished.applied for finished in of(first, ev.CompactionFinished)] == [False]
    assert not of(second, ev.CompactionFinished) and not of(third, ev.CompactionFinished)
    assert len([rec for rec in server.requests if is_summary_request(rec)]) == 1
    assert of(third, ev.TurnComplete)
