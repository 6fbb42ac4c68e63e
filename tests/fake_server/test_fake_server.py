"""Drive the fake server through the REAL openai / anthropic SDKs."""

from __future__ import annotations

import json
import math
import threading
import time

import anthropic
import httpx2
import openai
import pytest

from tests.fake_server import FakeModelServer, Reply, ToolCall, Usage, WebSearch

SHELL_TOOL = {
    "type": "function",
    "name": "shell",
    "strict": True,
    "parameters": {
        "type": "object",
        "properties": {"command": {"type": "string"}},
        "required": ["command"],
        "additionalProperties": False,
    },
}
CHAT_TOOL = {"type": "function", "function": {k: v for k, v in SHELL_TOOL.items() if k != "type"}}
ANTHROPIC_TOOL = {"name": "shell", "input_schema": SHELL_TOOL["parameters"]}


_clients: list = []


@pytest.fixture(autouse=True)
def _close_clients():
    yield
    while _clients:
        _clients.pop().close()


@pytest.fixture
def server():
    with FakeModelServer() as s:
        yield s


def oai(server: FakeModelServer) -> openai.OpenAI:
    _clients.append(openai.OpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0, timeout=5))
    return _clients[-1]


def ant(server: FakeModelServer) -> anthropic.Anthropic:
    _clients.append(anthropic.Anthropic(base_url=server.base_url, api_key="x", max_retries=0, timeout=5))
    return _clients[-1]


def ant_stream(server: FakeModelServer, **kw):
    return ant(server).messages.stream(
        model="claude-x", max_tokens=100, messages=[{"role": "user", "content": "hi"}], **kw
    )


# ------------------------------------------------------------------ happy paths
def test_responses_stream_text_reasoning_tools_usage(server):
    text = "Hello there, this is a longer reply."
    server.script(
        Reply(
            text=text,
            reasoning="Let me think.",
            chunk_size=5,
            tool_calls=[ToolCall("shell", {"command": "ls"}), ToolCall("shell", {"command": "pwd"})],
            usage=Usage(input_tokens=100, cached_input_tokens=40, output_tokens=30, reasoning_tokens=7),
        )
    )
    deltas, summary, seqs = [], [], []
    with oai(server).responses.stream(
        model="gpt-x", input="hi", tools=[SHELL_TOOL], include=["reasoning.encrypted_content"]
    ) as stream:
        for event in stream:
            seqs.append(event.sequence_number)
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            elif event.type == "response.reasoning_summary_text.delta":
                summary.append(event.delta)
        final = stream.get_final_response()
    assert "".join(deltas) == text and deltas[0] == "Hello"
    assert "".join(summary) == "Let me think."
    assert seqs == list(range(len(seqs)))
    reasoning, message, call1, call2 = final.output
    assert reasoning.type == "reasoning" and reasoning.summary[0].text == "Let me think."
    assert reasoning.encrypted_content and reasoning.encrypted_content.startswith("gAAAA")
    assert final.output_text == text
    assert (call1.name, call1.call_id, call1.parsed_arguments) == ("shell", "call_1", {"command": "ls"})
    assert (call2.call_id, json.loads(call2.arguments)) == ("call_2", {"command": "pwd"})
    u = final.usage
    assert (u.input_tokens, u.input_tokens_details.cached_tokens, u.output_tokens) == (100, 40, 30)
    assert (u.output_tokens_details.reasoning_tokens, u.total_tokens) == (7, 130)
    rec = server.requests[0]
    assert rec.protocol == "responses" and rec.path == "/v1/responses" and rec.body["input"] == "hi"
    assert rec.headers["authorization"] == "Bearer x"
    server.assert_done()


def test_responses_create_raw_events_and_computed_usage(server):
    server.script(Reply(text="abcdefghij", reasoning=""))  # reasoning "" = item without summary
    events = list(oai(server).responses.create(model="gpt-x", input=[{"role": "user", "content": "hi"}], stream=True))
    types = [e.type for e in events]
    assert types == [
        "response.created",
        "response.in_progress",
        "response.output_item.added",
        "response.output_item.done",  # reasoning, no summary
        "response.output_item.added",
        "response.content_part.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_text.done",
        "response.content_part.done",
        "response.output_item.done",
        "response.completed",
    ]
    completed = events[-1].response
    assert completed.output[0].encrypted_content is None  # not requested via `include`
    assert completed.usage.input_tokens == math.ceil(len(server.requests[0].raw) / 4)
    assert completed.usage.output_tokens == math.ceil(10 / 4)


def test_chat_stream_content_reasoning_tool_calls_usage(server):
    server.script(
        Reply(
            text="Sure, running.",
            reasoning="hmm, ls",
            chunk_size=4,
            tool_calls=[ToolCall("shell", {"command": "ls"}), ToolCall("shell", "{not json", "my_id")],
            usage=Usage(input_tokens=50, cached_input_tokens=10, output_tokens=20, reasoning_tokens=5),
        )
    )
    content, reasoning, calls, finish, usage = "", "", {}, None, None
    for chunk in oai(server).chat.completions.create(
        model="m",
        messages=[{"role": "user", "content": "hi"}],
        tools=[CHAT_TOOL],
        stream=True,
        stream_options={"include_usage": True},
    ):
        if chunk.usage:
            assert chunk.choices == []
            usage = chunk.usage
        for choice in chunk.choices:
            content += choice.delta.content or ""
            reasoning += getattr(choice.delta, "reasoning_content", None) or ""
            for tc in choice.delta.tool_calls or []:
                slot = calls.setdefault(tc.index, {"id": None, "name": "", "args": ""})
                slot["id"] = tc.id or slot["id"]
                slot["name"] += (tc.function.name or "") if tc.function else ""
                slot["args"] += (tc.function.arguments or "") if tc.function else ""
            finish = choice.finish_reason or finish
    assert (content, reasoning, finish) == ("Sure, running.", "hmm, ls", "tool_calls")
    assert calls[0] == {"id": "call_1", "name": "shell", "args": '{"command": "ls"}'}
    assert calls[1] == {"id": "my_id", "name": "shell", "args": "{not json"}  # raw malformed JSON kept
    assert (usage.prompt_tokens, usage.completion_tokens, usage.total_tokens) == (50, 20, 70)
    assert usage.prompt_tokens_details.cached_tokens == 10
    assert usage.completion_tokens_details.reasoning_tokens == 5
    assert server.requests[0].protocol == "chat"


def test_chat_stream_helper_final_completion_and_no_usage_without_option(server):
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "ls"})]), Reply(text="plain"))
    client = oai(server)
    with client.chat.completions.stream(
        model="m", messages=[{"role": "user", "content": "x"}], tools=[CHAT_TOOL]
    ) as stream:
        completion = stream.get_final_completion()
    call = completion.choices[0].message.tool_calls[0]
    assert (call.id, call.function.name, call.function.parsed_arguments) == ("call_1", "shell", {"command": "ls"})
    assert completion.choices[0].finish_reason == "tool_calls"
    chunks = list(client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True))
    assert all(c.usage is None and c.choices for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks) == "plain"


def test_anthropic_stream_thinking_text_tool_use_usage(server):
    server.script(
        Reply(
            text="I'll list files.",
            reasoning="Need ls.",
            chunk_size=3,
            tool_calls=[ToolCall("shell", {"command": "ls -la"})],
            usage=Usage(
                input_tokens=100,
                cached_input_tokens=60,
                output_tokens=25,
                reasoning_tokens=4,
                cache_creation_input_tokens=10,
            ),
        )
    )
    with ant_stream(server, tools=[ANTHROPIC_TOOL]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "I'll list files."
    thinking, block, tool = final.content
    assert (thinking.type, thinking.thinking) == ("thinking", "Need ls.") and thinking.signature
    assert block.text == "I'll list files."
    assert (tool.type, tool.id, tool.name, tool.input) == ("tool_use", "toolu_1", "shell", {"command": "ls -la"})
    assert final.stop_reason == "tool_use"
    u = final.usage
    assert (u.input_tokens, u.cache_read_input_tokens, u.cache_creation_input_tokens) == (30, 60, 10)
    assert u.output_tokens == 25 and u.output_tokens_details.thinking_tokens == 4
    rec = server.requests[0]
    assert rec.protocol == "anthropic" and rec.body["max_tokens"] == 100 and "anthropic-version" in rec.headers
    assert "x" in (rec.headers.get("x-api-key"), rec.headers.get("authorization", "").removeprefix("Bearer "))


def test_anthropic_end_turn_and_event_order(server):
    server.script(Reply(text="hello"))
    with ant_stream(server) as stream:
        types = [e.type for e in stream]
        final = stream.get_final_message()
    assert types[0] == "message_start" and types[-2:] == ["message_delta", "message_stop"]
    assert final.stop_reason == "end_turn" and final.content[0].text == "hello"
    assert final.usage.input_tokens == math.ceil(len(server.requests[0].raw) / 4)


def test_non_streaming_requests_get_final_objects(server):
    server.script(
        Reply(text="one"), Reply(text="two", tool_calls=[ToolCall("shell", {"command": "ls"})]), Reply(text="three")
    )
    resp = oai(server).responses.create(model="m", input="hi")
    assert resp.output_text == "one" and resp.usage.output_tokens == 1
    chat = oai(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}])
    assert chat.choices[0].message.tool_calls[0].function.arguments == '{"command": "ls"}'
    msg = ant(server).messages.create(model="c", max_tokens=10, messages=[{"role": "user", "content": "x"}])
    assert msg.content[0].text == "three" and msg.stop_reason == "end_turn"


def test_callable_and_string_script_items(server):
    server.script(lambda req: Reply(text=f"model={req.body['model']} proto={req.protocol}"), "just text")
    client = oai(server)
    first = client.responses.create(model="gpt-q", input="x")
    second = client.responses.create(model="gpt-q", input="x")
    assert first.output_text == "model=gpt-q proto=responses" and second.output_text == "just text"
    server.assert_done()


# ------------------------------------------------------------------ faults
@pytest.mark.parametrize(
    "status,exc,code",
    [
        (429, openai.RateLimitError, "rate_limit_exceeded"),
        (500, openai.InternalServerError, None),
        (401, openai.AuthenticationError, "invalid_api_key"),
        (404, openai.NotFoundError, "model_not_found"),
    ],
)
def test_openai_http_errors(server, status, exc, code):
    server.script(Reply.http_error(status, retry_after=2 if status == 429 else None))
    with pytest.raises(exc) as info:
        oai(server).responses.create(model="gpt-x", input="hi", stream=True)
    assert info.value.status_code == status and info.value.code == code
    assert isinstance(info.value.body, dict) and info.value.body["message"]
    if status == 429:
        assert info.value.response.headers["retry-after"] == "2"
    server.assert_done()


@pytest.mark.parametrize(
    "status,exc,etype",
    [
        (429, anthropic.RateLimitError, "rate_limit_error"),
        (529, anthropic.OverloadedError, "overloaded_error"),
        (500, anthropic.InternalServerError, "api_error"),
        (401, anthropic.AuthenticationError, "authentication_error"),
        (404, anthropic.NotFoundError, "not_found_error"),
    ],
)
def test_anthropic_http_errors(server, status, exc, etype):
    server.script(Reply.http_error(status, retry_after=1, message="boom"))
    with pytest.raises(exc) as info:
        with ant_stream(server) as stream:
            stream.get_final_message()
    assert info.value.body["error"] == {"type": etype, "message": "boom"}
    assert info.value.response.headers["retry-after"] == "1"


def test_cut_stream_openai_raises_connection_error(server):
    server.script(Reply.cut(text="partial text here", after_events=6, chunk_size=4))
    seen = []
    with pytest.raises(openai.APIConnectionError) as info:
        for event in oai(server).responses.create(model="m", input="x", stream=True):
            seen.append(getattr(event, "delta", None))
    assert isinstance(info.value.__cause__, httpx2.RemoteProtocolError)
    assert seen[-2:] == ["part", "ial "]  # events 5 and 6 were text deltas


def test_cut_stream_chat_and_anthropic(server):
    server.script(Reply.cut(after_events=2), Reply.cut(after_events=3))
    with pytest.raises(openai.APIConnectionError):
        list(oai(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True))
    with pytest.raises(httpx2.RemoteProtocolError):
        with ant_stream(server) as stream:
            stream.get_final_message()


def test_stream_error_mid_stream(server):
    server.script(
        Reply.stream_error("Overloaded", after_events=3),
        Reply.stream_error("bad", after_events=2),
        Reply.stream_error("gone", after_events=2),
    )
    with pytest.raises(anthropic.APIStatusError) as info:
        with ant_stream(server) as stream:
            stream.get_final_message()
    assert info.value.body["error"]["type"] == "overloaded_error"
    with pytest.raises(openai.APIError, match="bad"):
        list(oai(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True))
    events = list(oai(server).responses.create(model="m", input="x", stream=True))
    assert events[-1].type == "response.failed" and events[-1].response.error.message == "gone"


def test_context_length_exceeded_replies(server):
    server.script(
        Reply.context_length_exceeded(), Reply.context_length_exceeded(), Reply.context_length_exceeded(in_stream=True)
    )
    with pytest.raises(openai.BadRequestError) as info:
        oai(server).chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], stream=True)
    assert info.value.code == "context_length_exceeded" and "maximum context length is 16000" in info.value.message
    with pytest.raises(anthropic.BadRequestError) as ainfo:
        with ant_stream(server) as stream:
            stream.get_final_message()
    assert ainfo.value.body["error"] == {
        "type": "invalid_request_error",
        "message": "prompt is too long: 17000 tokens > 16000 maximum",
    }
    events = list(oai(server).responses.create(model="m", input="x", stream=True))
    assert [e.type for e in events] == ["response.created", "response.in_progress", "response.failed"]
    assert events[-1].response.error.code == "context_length_exceeded"


def test_context_window_overflow_does_not_consume():
    with FakeModelServer(context_window=100) as server:
        server.script(Reply(text="small ok"))
        client = oai(server)
        with pytest.raises(openai.BadRequestError) as info:
            client.responses.create(model="m", input="x" * 1000, stream=True)
        assert info.value.code == "context_length_exceeded"
        with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
            ant(server).messages.create(
                model="c", max_tokens=5, messages=[{"role": "user", "content": "y" * 800}], stream=True
            )
        assert client.responses.create(model="m", input="x").output_text == "small ok"
        assert [r.overflowed for r in server.requests] == [True, True, False]
        assert server.requests[0].input_tokens > 100
        server.assert_done()


def test_unexpected_request_and_leftovers():
    with FakeModelServer() as server:
        with pytest.raises(openai.InternalServerError):
            oai(server).responses.create(model="m", input="x", stream=True)
        assert len(server.unexpected) == 1 and server.unexpected[0].protocol == "responses"
        with pytest.raises(AssertionError, match="unexpected"):
            server.assert_done()
    with FakeModelServer() as server:
        server.script(Reply(text="never used"))
        with pytest.raises(AssertionError, match="1 scripted replies not consumed"):
            server.assert_done()


def test_failing_callable_is_reported(server):
    server.script(lambda req: 1 / 0)
    with pytest.raises(openai.InternalServerError):
        oai(server).responses.create(model="m", input="x", stream=True)
    with pytest.raises(AssertionError, match="ZeroDivisionError"):
        server.assert_done()


# ------------------------------------------------------------------ robustness
def test_concurrent_requests_and_bad_input(server):
    server.script(*[Reply(text=f"r{i}", delay=0.01) for i in range(8)])
    results: list[str] = []

    threads = [
        threading.Thread(
            target=lambda: results.append(
                "".join(
                    e.delta
                    for e in oai(server).responses.create(model="m", input="x", stream=True)
                    if e.type == "response.output_text.delta"
                )
            )
        )
        for _ in range(8)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join(5)
    assert sorted(results) == [f"r{i}" for i in range(8)]
    bad = httpx2.post(server.openai_base_url + "/responses", content=b"{not json")
    assert bad.status_code == 400 and bad.json()["error"]["message"]
    assert httpx2.get(server.base_url + "/v1/models").json()["data"][0]["id"] == "fake-model"
    assert httpx2.post(server.base_url + "/v1/messages/count_tokens", content=b"x" * 40).json() == {"input_tokens": 10}


def test_stop_does_not_hang_with_open_stream():
    server = FakeModelServer().start()
    server.script(Reply(text="x" * 100, chunk_size=1, delay=0.5))
    client = oai(server)
    stream = client.responses.create(model="m", input="x", stream=True)
    next(iter(stream))
    t0 = time.monotonic()
    server.stop()
    assert time.monotonic() - t0 < 2
    with pytest.raises(openai.APIConnectionError):
        list(stream)


@pytest.mark.asyncio
async def test_async_clients(server):
    server.script(
        Reply(text="hey", tool_calls=[ToolCall("shell", {"command": "ls"})]),
        Reply(text="yo", reasoning="r"),
        Reply.cut(after_events=4),
        Reply.cut(after_events=4),
    )
    o = openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="x", max_retries=0, timeout=5)
    a = anthropic.AsyncAnthropic(base_url=server.base_url, api_key="x", max_retries=0, timeout=5)
    try:
        async with o.responses.stream(model="m", input="x") as stream:
            final = await stream.get_final_response()
        assert final.output_text == "hey" and final.output[-1].arguments == '{"command": "ls"}'
        async with a.messages.stream(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}]) as st:
            message = await st.get_final_message()
        assert [b.type for b in message.content] == ["thinking", "text"]
        with pytest.raises(openai.APIConnectionError):
            async with o.responses.stream(model="m", input="x") as stream:
                await stream.get_final_response()
        with pytest.raises(httpx2.RemoteProtocolError):
            async with a.messages.stream(model="c", max_tokens=5, messages=[{"role": "user", "content": "x"}]) as st:
                await st.get_final_message()
    finally:
        await o.close()
        await a.close()


# ------------------------------------------------------------------ provider-side web search
SEARCH = WebSearch(
    "python 3.13 release date",
    [
        {"title": "Python 3.13", "url": "https://docs.python.org/3.13/"},
        {"title": "PEP 719", "url": "https://peps.python.org/pep-0719/"},
    ],
)


def test_responses_web_search_call_and_url_citations_parse_in_the_sdk(server):
    server.script(Reply(text="It was released in October 2024.", web_search=SEARCH))
    kinds, annotations = [], []
    with oai(server).responses.stream(model="gpt-x", input="when?", tools=[{"type": "web_search"}]) as stream:
        for event in stream:
            kinds.append(event.type)
            if event.type == "response.output_text.annotation.added":
                annotations.append(event.annotation)
        final = stream.get_final_response()
    assert kinds.index("response.web_search_call.searching") < kinds.index("response.web_search_call.completed")
    search, message = final.output
    assert search.type == "web_search_call" and search.status == "completed"
    assert search.action.query == SEARCH.query and [s.url for s in search.action.sources] == [
        r["url"] for r in SEARCH.results
    ]
    cited = message.content[0].annotations
    assert [a.type for a in cited] == ["url_citation", "url_citation"] and cited[0].title == "Python 3.13"
    assert len(annotations) == 2


def test_anthropic_server_tool_use_search_result_and_citations_parse_in_the_sdk(server):
    server.script(Reply(text="It was released in October 2024.", web_search=SEARCH))
    with ant_stream(server, tools=[{"type": "web_search_20250305", "name": "web_search", "max_uses": 5}]) as stream:
        text = "".join(stream.text_stream)
        final = stream.get_final_message()
    assert text == "It was released in October 2024."
    use, result, answer = final.content
    assert (use.type, use.name, use.input) == ("server_tool_use", "web_search", {"query": SEARCH.query})
    assert result.type == "web_search_tool_result" and result.tool_use_id == use.id
    assert [r.url for r in result.content] == [r["url"] for r in SEARCH.results] and result.content[0].encrypted_content
    assert [c.type for c in answer.citations] == ["web_search_result_location"] * 2
    assert answer.citations[1].url == "https://peps.python.org/pep-0719/"
    assert final.usage.server_tool_use.web_search_requests == 1
