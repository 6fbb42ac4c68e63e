"""Local and routed OpenAI-compatible servers: the real window, learned and discovered, and
counts calibrated to the server's tokenizer. A real Session and its real client talk to fake
servers that imitate llama.cpp, Ollama, vLLM, LM Studio and OpenRouter."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_cli import events as ev
from agent_cli.items import user
from agent_cli.models import discovery
from agent_cli.runtime import open_session
from agent_cli.session.resume import restore
from agent_cli.session.session import Session
from tests.fake_server import FakeModelServer, Reply, ToolCall, Usage
from tests.fake_server.local_servers import (
    llamacpp_overflow_body,
    llamacpp_routes,
    lmstudio_routes,
    ollama_routes,
    openrouter_routes,
    vllm_routes,
)
from tests.session_helpers import collect_events, make_session

MODEL = "qwen2.5-coder:7b"  # the model table says 32,768 tokens
COMPACT_MARK = "Your context window is about to be reset"


@pytest.fixture(autouse=True)
def fresh_discovery_cache():
    discovery.forget_session_cache()
    yield
    discovery.forget_session_cache()


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    root = tmp_path / "repo"
    root.mkdir()
    (root / ".git").mkdir()
    for i in range(6):  # ~4,000 tokens each on the wire
        lines = "".join(f"record {n:03d} of data{i}: " + "lorem ipsum dolor sit amet " * 2 + "\n" for n in range(200))
        (root / f"data{i}.txt").write_text(lines)
    return root


def of(events: list[ev.Event], kind: type) -> list:
    return [event for event in events if isinstance(event, kind)]


def is_summary_request(rec) -> bool:
    messages = rec.body["messages"]
    return COMPACT_MARK in str(messages[-1].get("content"))


class Reader:
    """The scripted model: read the files one per response, then answer; summarize when asked."""

    def __init__(self, files: list[str], usage=None):
        self.files, self.step, self.usage = list(files), 0, usage

    def __call__(self, rec) -> Reply:
        usage = self.usage(rec) if self.usage else None
        if is_summary_request(rec):
            return Reply(text=f"## Task\nRead the data files; {self.step} read so far.", usage=usage)
        if self.step < len(self.files):
            self.step += 1
            return Reply(tool_calls=[ToolCall("read_file", {"path": self.files[self.step - 1]})], usage=usage)
        return Reply(text=f"read {self.step} files", usage=usage)


# --- discovery ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "routes, base_path, tokens, source",
    [
        (llamacpp_routes(8192), "/v1", 8192, "server: llama.cpp GET /props"),
        (ollama_routes(32768, num_ctx=16384), "/v1", 16384, "server: Ollama POST /api/show"),
        (ollama_routes(32768), "/v1", 32768, "server: Ollama POST /api/show"),
        (vllm_routes(MODEL, 24576), "/v1", 24576, "server: vLLM GET /v1/models"),
        (lmstudio_routes(MODEL, 12288), "/v1", 12288, "server: LM Studio GET /api/v0/models"),
        (openrouter_routes(MODEL, 65536), "/api/v1", 65536, "server: OpenRouter GET /api/v1/models"),
    ],
)
async def test_each_server_tells_its_window(routes, base_path, tokens, source, tmp_path):
    with FakeModelServer(routes=routes) as server:
        found = await discovery.discover_window(server.base_url + base_path, MODEL, cache_dir=tmp_path)
    assert (found.tokens, found.source) == (tokens, source)
    assert not server.unexpected  # the other servers' paths answered 404 quietly


async def test_a_server_that_says_nothing_leaves_the_window_unknown(tmp_path):
    with FakeModelServer() as server:
        assert await discovery.discover_window(server.openai_base_url, MODEL, cache_dir=tmp_path) is None
    assert not (tmp_path / discovery.CACHE_FILE).exists()  # unknown is not remembered for a day


async def test_session_uses_the_discovered_window_shows_it_and_caches_it(repo, monkeypatch):
    with FakeModelServer(routes=llamacpp_routes(8192)) as server:
        server.script(Reply(text="hi"))
        session = make_session(server, repo, monkeypatch, model=MODEL)
        assert session.window.tokens == 32768 and session.window.source == "model table"
        events = await collect_events(session, "hello")
        assert of(events, ev.TurnComplete)
        notice = [n for n in of(events, ev.Notice) if n.title == "context window"]
        assert len(notice) == 1 and "llama.cpp serves qwen2.5-coder:7b with a 8,192-token" in notice[0].text
        assert session.window.tokens == 8192
        assert of(events, ev.TokenCount)[-1].context_window == 8192 * 95 // 100
        status = [n.text for n in of(await collect_events(session, "/status"), ev.Notice) if n.title == "status"][0]
        assert "8,192 tokens (server: llama.cpp GET /props)" in status
        await session.aclose()

        # A new session (a new process) within a day reads the cache and asks nothing.
        discovery.forget_session_cache()
        hits = len(server.route_hits)
        server.script(Reply(text="hi again"))
        again = make_session(server, repo, monkeypatch, model=MODEL)
        await collect_events(again, "hello")
        await again.aclose()
    assert again.window.tokens == 8192 and len(server.route_hits) == hits


async def test_a_configured_window_is_not_probed(repo, monkeypatch):
    with FakeModelServer(routes=llamacpp_routes(8192)) as server:
        server.script(Reply(text="hi"))
        session = make_session(server, repo, monkeypatch, "model_context_window=20000", model=MODEL)
        await collect_events(session, "hello")
        await session.aclose()
    assert server.route_hits == [] and session.window.tokens == 20000 and session.window.source == "config"


CHILD_MODEL = "child-model:3b"
CHILD_AGENT = """---
name: scout
description: Looks around on a smaller model.
model: child-model:3b
---
Answer briefly.
"""


async def test_a_subagent_that_learns_its_window_leaves_the_parents_as_it_was(repo, monkeypatch):
    (repo / ".agent" / "agents").mkdir(parents=True)
    (repo / ".agent" / "agents" / "scout.md").write_text(CHILD_AGENT)
    task = {"agent": "scout", "description": "look", "prompt": "look around"}
    with FakeModelServer(routes=lmstudio_routes(CHILD_MODEL, 12288)) as server:  # it lists only the child's model
        server.script(Reply(tool_calls=[ToolCall("task", task)]), Reply(text="seen"), Reply(text="done"))
        session = make_session(server, repo, monkeypatch, model=MODEL)
        events = await collect_events(session, "send the scout")
        await session.aclose()

    assert [rec.body["model"] for rec in server.requests] == [MODEL, CHILD_MODEL, MODEL]
    learned = [e.event for e in of(events, ev.SubagentEvent) if isinstance(e.event, ev.Notice)]
    assert any("LM Studio serves child-model:3b with a 12,288-token" in n.text for n in learned)
    assert session.effective_window == 32768 * 95 // 100  # the model table's, as before the child ran
    assert of(events, ev.TokenCount)[-1].context_window == 32768 * 95 // 100


async def test_a_learned_window_is_found_again_after_switching_away_and_back(repo, monkeypatch):
    with FakeModelServer() as server:
        session = make_session(server, repo, monkeypatch, model=MODEL)
        session.window.set(8192, "server error (prompt too long)")  # as an overflow error would teach it
        session.switch_model("gpt-4o")
        assert (session.window.tokens, session.window.source) == (128_000, "model table")  # gpt-4o's own
        session.switch_model(MODEL)  # /model back, or the end of a command file's turn on another model
        assert (session.window.tokens, session.window.source) == (8192, "server error (prompt too long)")
        await session.aclose()


# --- learning from an overflow -----------------------------------------------------------------

# These windows would turn on the lean profile, whose prompt leaves room enough not to compact:
# the full profile keeps the conversation outgrowing the window they test.
FULL = 'context_profile="full"'


async def test_window_learned_from_llamacpp_overflow_then_compaction_and_retry(repo, monkeypatch):
    reader = Reader([f"data{i}.txt" for i in range(5)])
    with FakeModelServer(context_window=8192, overflow_body=llamacpp_overflow_body, fallback=reader) as server:
        session = make_session(server, repo, monkeypatch, FULL, model=MODEL)
        events = await collect_events(session, "Read every data file.")
        await session.aclose()

    assert of(events, ev.TurnComplete) and not of(events, ev.TurnFailed)
    assert session.window.tokens == 8192 and session.window.source == "server error (prompt too long)"
    learned = [n for n in of(events, ev.Notice) if n.title == "context window"]
    assert len(learned) == 1 and "8,192 tokens" in learned[0].text and "32,768" in learned[0].text
    finished = of(events, ev.CompactionFinished)
    assert finished[0].trigger == "overflow" and finished[0].applied
    # Once the window is known, later growth is compacted before the server refuses anything.
    assert any(f.trigger == "auto" for f in finished[1:])
    refused = [rec for rec in server.requests if rec.overflowed and not is_summary_request(rec)]
    assert len(refused) == 1
    assert reader.step == 5 and server.requests[-1].reply.text == "read 5 files"


async def test_a_learned_window_survives_a_resume(repo, monkeypatch):
    reader = Reader(["data0.txt", "data1.txt"])  # no discovery answers: only a refusal names the window
    with FakeModelServer(context_window=8192, overflow_body=llamacpp_overflow_body, fallback=reader) as server:
        session = make_session(server, repo, monkeypatch, FULL, model=MODEL)
        await collect_events(session, "Read the data files.")
        await session.aclose()
        refused = [rec for rec in server.requests if rec.overflowed and not is_summary_request(rec)]
        assert session.window.tokens == 8192 and len(refused) == 1

        fresh = make_session(
            server, repo, monkeypatch, FULL, model=MODEL
        ).config  # a new process: the model table's 32,768
        resumed = restore(open_session(fresh, interactive=False), session.rollout.path)
        assert (resumed.window.tokens, resumed.window.source) == (8192, "server error (prompt too long)")
        assert fresh.context_window == 32768  # learned by the session, not written into the config
        reader.files += ["data2.txt", "data3.txt"]
        events = await collect_events(resumed, "Read the next two.")  # each file takes about half the window
        await resumed.aclose()

    assert of(events, ev.TurnComplete) and {f.trigger for f in of(events, ev.CompactionFinished)} == {"auto"}
    assert len([rec for rec in server.requests if rec.overflowed and not is_summary_request(rec)]) == 1


# --- silent truncation --------------------------------------------------------------------------


async def test_silent_truncation_is_detected_once_and_lowers_the_window(repo, monkeypatch):
    kept = 6000  # like Ollama with num_ctx 6000: the prompt is cut, no error, usage says what it kept
    reader = Reader(
        ["data0.txt", "data1.txt", "data2.txt", "data3.txt"],
        usage=lambda rec: Usage(input_tokens=min(rec.input_tokens, kept)),
    )
    with FakeModelServer(fallback=reader) as server:
        session = make_session(server, repo, monkeypatch, model=MODEL)
        events = await collect_events(session, "Read every data file.")
        events += await collect_events(session, "Once more, briefly.")
        await session.aclose()

    warnings = [w.message for w in of(events, ev.Warning) if "server processed about" in w.message]
    assert len(warnings) == 1 and "6,000 of the ~" in warnings[0] and "model_context_window" in warnings[0]
    assert session.window.tokens == kept
    assert len(of(events, ev.TurnComplete)) == 2
    assert any(f.trigger == "auto" and f.applied for f in of(events, ev.CompactionFinished))


# --- calibration --------------------------------------------------------------------------------


async def test_calibration_brings_estimates_within_ten_percent_after_two_responses(repo, monkeypatch):
    reader = Reader(["data0.txt"])
    with FakeModelServer(token_scale=2.5, fallback=reader) as server:
        session = make_session(server, repo, monkeypatch, "model_context_window=200000", model=MODEL)
        await collect_events(session, "Read the data file.")  # two responses: a tool call, then the answer
        counter = session.tokens
        question = user("And now a short summary of what you read, please.")
        raw = counter.prompt_overhead(session.instructions, session.tool_specs())
        raw += session.history.estimated_tokens + counter.item_tokens(question)
        expected = counter.calibrated(raw)
        await collect_events(session, question.text)
        await session.aclose()
    reported = server.requests[2].input_tokens
    assert abs(raw - reported) / reported > 0.5  # uncalibrated, bytes/4 is far off
    assert abs(expected - reported) / reported < 0.10
    assert counter.accuracy.startswith("calibrated ×")
    usage = [u for u in of(await _context(session), ev.ContextUsage)][0]
    assert usage.accuracy.startswith("calibrated") and abs(usage.used - reported) / reported < 0.15


async def test_calibration_survives_a_resume_so_its_first_request_fits(repo, monkeypatch):
    window = 30_000  # the fixed prompt and one data file come to ~20,000 of the server's tokens
    reader = Reader(["data0.txt"])
    with FakeModelServer(
        context_window=window, token_scale=2.5, overflow_body=llamacpp_overflow_body, fallback=reader
    ) as server:
        session = make_session(server, repo, monkeypatch, f"model_context_window={window}", model=MODEL)
        await collect_events(session, "Read the data file.")
        ratio = session.tokens.calibration.ratio
        await session.aclose()
        lines = session.rollout.path.read_text().splitlines()
        learned = [line for line in lines if '"type":"learned"' in line and '"what":"usage"' not in line]
        assert len(learned) == 1 and MODEL in learned[0]  # written when it changed, not per request

        resumed = restore(open_session(session.config, interactive=False), session.rollout.path)
        assert resumed.tokens.calibration.ratio == pytest.approx(ratio, rel=0.05)
        assert resumed.tokens.accuracy.startswith("calibrated ×") and not resumed.resumed.warnings
        # A pasted log: ~12,000 of the server's tokens, ~4,800 by bytes/4. Planned with bytes/4
        # the request looks well under the threshold, and the server refuses it.
        log = "".join(f"12:00:{n % 60:02d} worker {n} finished step {n * 7} ok\n" for n in range(480))
        events = await collect_events(resumed, f"Here is the log:\n{log}")
        await resumed.aclose()

    assert of(events, ev.TurnComplete) and [f.trigger for f in of(events, ev.CompactionFinished)] == ["auto"]
    assert not [rec for rec in server.requests if rec.overflowed and not is_summary_request(rec)]


async def test_a_session_file_without_learned_lines_resumes_estimated(repo, monkeypatch):
    with FakeModelServer(token_scale=2.5, fallback=Reader([])) as server:
        session = make_session(server, repo, monkeypatch, "model_context_window=200000", model=MODEL)
        await collect_events(session, "hello")
        await session.aclose()
    path = session.rollout.path
    path.write_text("".join(line + "\n" for line in path.read_text().splitlines() if '"type":"learned"' not in line))
    resumed = restore(open_session(session.config, interactive=False), path)
    assert resumed.tokens.accuracy == "estimated" and not resumed.resumed.warnings
    await resumed.aclose()


async def test_learned_lines_apply_to_their_own_model_and_bad_ones_are_skipped(repo, monkeypatch):
    with FakeModelServer(token_scale=2.5, fallback=Reader([])) as server:
        session = make_session(server, repo, monkeypatch, "model_context_window=200000", model=MODEL)
        await collect_events(session, "hello")
        await session.aclose()
    ratio = session.tokens.calibration.ratio
    with session.rollout.path.open("a") as file:
        file.write('{"type":"learned","what":"calibration","model":"other:3b","ratio":3.5,"reports":4}\n')
        file.write('{"type":"learned","what":"calibration","model":"%s","ratio":"lots","reports":1}\n' % MODEL)
        file.write('{"type":"learned","what":"something newer","value":1}\n')
    resumed = restore(open_session(session.config, interactive=False), session.rollout.path)
    assert resumed.tokens.calibration.ratio == pytest.approx(ratio, rel=0.05)  # the malformed line is skipped
    assert resumed.meter.counter_for("other:3b").calibration.ratio == 3.5
    assert resumed.resumed.warnings == ("skipped a malformed learned calibration line in the session file",)
    await resumed.aclose()


async def _context(session: Session) -> list[ev.Event]:
    return await collect_events(session, "/context")


# --- a model that never calls tools -------------------------------------------------------------


async def test_a_model_that_never_calls_tools_is_pointed_out_once(repo, monkeypatch):
    answer = "You can list them yourself:\n```bash\nls -la\n```"
    with FakeModelServer() as server:
        server.script(*[Reply(text=answer)] * 4)
        session = make_session(server, repo, monkeypatch, "model_context_window=32768", model=MODEL)
        turns = [await collect_events(session, f"list the files ({n})") for n in range(4)]
        await session.aclose()
    notices = [[w.message for w in of(events, ev.Warning) if "has not called a tool" in w.message] for events in turns]
    assert notices[:2] == [[], []] and notices[3] == []
    assert len(notices[2]) == 1 and MODEL in notices[2][0] and "qwen2.5-coder" in notices[2][0]


async def test_a_model_that_calls_tools_is_left_alone(repo, monkeypatch):
    with FakeModelServer() as server:
        server.script(Reply(tool_calls=[ToolCall("list_dir", {"path": "."})]), *[Reply(text="```bash\nls\n```")] * 4)
        session = make_session(server, repo, monkeypatch, "model_context_window=32768", model=MODEL)
        events = [event for n in range(4) for event in await collect_events(session, f"files? ({n})")]
        await session.aclose()
    assert not [w for w in of(events, ev.Warning) if "has not called a tool" in w.message]


# --- what a server rejected ---------------------------------------------------------------------


async def test_what_a_server_rejected_is_remembered_across_model_switches(repo, monkeypatch):
    def server_answer(rec) -> Reply:  # the server rejects stream_options; one of its models has no tools
        if "stream_options" in rec.body:
            return Reply.http_error(400, message="stream_options: Extra inputs are not permitted")
        if rec.body["model"] == "gemma2:2b" and "tools" in rec.body:
            return Reply.http_error(400, message="registry.ollama.ai/library/gemma2:2b does not support tools")
        return Reply(text="hello")

    with FakeModelServer(fallback=server_answer) as server:
        session = make_session(server, repo, monkeypatch, "model_context_window=32768", model=MODEL)
        events = await collect_events(session, "hi")
        for model in ("gemma2:2b", MODEL, "gemma2:2b"):
            events += await collect_events(session, f"/model {model}")
            events += await collect_events(session, "hi again")
        await session.aclose()

    assert len(of(events, ev.TurnComplete)) == 4
    sent = [("stream_options" in rec.body, "tools" in rec.body) for rec in server.requests]
    # Each refusal happens once: stream_options for the server, tools for gemma only.
    assert sent == [(True, True), (False, True), (False, True), (False, False), (False, True), (False, False)]
    notices = [w for w in of(events, ev.Warning) if "does not support tool calls" in w.message]
    assert len(notices) == 1 and "gemma2:2b" in notices[0].message
