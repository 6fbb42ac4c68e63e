"""Real provider streams the hand-written clients misread (issue 20), replayed by the fake server
event for event and read by the SDK-based clients over real HTTP."""

from __future__ import annotations

import pytest

from agent_cli import items
from agent_cli.items import Message, Reasoning
from agent_cli.models.base import STOP_END, STOP_MAX_TOKENS, STOP_PAUSED, STOP_REFUSAL, Prompt, ReasoningDelta
from agent_cli.models.errors import ContextWindowExceeded, ModelError
from tests.fake_server import Reply
from tests.integration.model_client_helpers import collect, completed, make_client, output_items, retries, text_deltas

pytestmark = pytest.mark.usefixtures("script_used_up")  # every test uses up its script
PROMPT = Prompt("sys", [items.user("hello")])


def chunk(delta: dict | None = None, finish: str | None = None, **extra) -> dict:
    """One Chat Completions chunk, as OpenAI-compatible servers send it."""
    choice = {"index": 0, "delta": delta or {}, "finish_reason": finish}
    return {
        "id": "chatcmpl-raw",
        "object": "chat.completion.chunk",
        "created": 1,
        "model": "m",
        "choices": [choice],
        **extra,
    }


def anthropic_events(text: str, stop_reason: str, *, message_stop: bool = True) -> list[tuple[str, dict]]:
    message = {
        "id": "msg_raw",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 10, "output_tokens": 1},
    }
    events = [
        ("message_start", {"type": "message_start", "message": message}),
        (
            "content_block_start",
            {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}},
        ),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                "usage": {"output_tokens": 5},
            },
        ),
    ]
    return events + ([("message_stop", {"type": "message_stop"})] if message_stop else [])


# 1. An error inside a chunk that also carries `choices` (OpenRouter) is an error, not an empty answer.
async def test_chat_error_chunk_with_choices_reaches_the_user(server):
    error = {"code": 400, "message": "Token limit reached"}
    server.script(Reply.raw([chunk({"role": "assistant", "content": ""}, error=error), "[DONE]"]))
    with pytest.raises(ModelError, match="Token limit reached") as raised:
        await collect(make_client(server, "chat"), PROMPT)
    assert "HTTP 400" in str(raised.value) and len(server.requests) == 1  # a 400 is not retried


async def test_chat_error_chunk_with_choices_follows_the_retry_and_overflow_rules(server):
    overloaded = {"code": 502, "message": "Upstream overloaded"}
    overflow = {"code": 400, "message": "This model's maximum context length is 8192 tokens"}
    server.script(
        Reply.raw([chunk({"content": ""}, error=overloaded)]),
        Reply.raw([chunk({"content": ""}, error=overflow), "[DONE]"]),
    )
    events = []
    with pytest.raises(ContextWindowExceeded):
        await collect(make_client(server, "chat"), PROMPT, events)
    assert len(retries(events)) == 1 and "Upstream overloaded" in retries(events)[0].reason


# 2. `[DONE]` without any finish_reason is a proper end, not a cut stream.
async def test_chat_done_without_finish_reason_is_a_proper_end(server):
    server.script(Reply.raw([chunk({"role": "assistant", "content": "All "}), chunk({"content": "done."}), "[DONE]"]))
    events = await collect(make_client(server, "chat"), PROMPT)
    assert retries(events) == [] and len(server.requests) == 1
    assert output_items(events) == [Message("assistant", "All done.")]
    assert completed(events).stop_reason == STOP_END


# 3. A refusal is kept as the model said it, marked as a refusal, on every wire that has one (exec
# and --json report it as a refusal item: tests/integration/test_exec_refusal.py).
async def test_chat_refusal_is_kept_but_not_streamed_as_answer_text(server):
    server.script(
        Reply.raw(
            [
                chunk({"role": "assistant", "refusal": "I can't help "}),
                chunk({"refusal": "with that."}, finish="stop"),
                "[DONE]",
            ]
        )
    )
    events = await collect(make_client(server, "chat"), PROMPT)
    assert text_deltas(events) == ""
    assert output_items(events) == [Message("assistant", "I can't help with that.")]
    assert completed(events).stop_reason == STOP_REFUSAL


async def test_anthropic_refusal_stop_reason(server):
    server.script(Reply.raw(anthropic_events("I won't do that.", "refusal")))
    events = await collect(make_client(server, "anthropic"), PROMPT)
    assert output_items(events) == [Message("assistant", "I won't do that.")]
    assert completed(events).stop_reason == STOP_REFUSAL


async def test_responses_refusal_part(server):
    part = {"type": "refusal", "refusal": "No."}
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": [part]}
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": [item],
        "usage": {"input_tokens": 5, "output_tokens": 1},
    }
    server.script(
        Reply.raw(
            [
                {
                    "type": "response.created",
                    "sequence_number": 0,
                    "response": {**response, "status": "in_progress", "output": []},
                },
                {
                    "type": "response.refusal.delta",
                    "sequence_number": 1,
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": "No.",
                },
                {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": item},
                {"type": "response.completed", "sequence_number": 3, "response": response},
            ]
        )
    )
    events = await collect(make_client(server, "responses"), PROMPT)
    assert text_deltas(events) == "No."
    assert output_items(events) == [Message("assistant", "No.", id="msg_1")]
    assert completed(events).stop_reason == STOP_REFUSAL


async def test_responses_refusal_after_some_text_keeps_both(server):
    # A message may hold output_text and then a refusal part (the model declined mid-answer);
    # the refusal's words were dropped, as Chat keeps them.
    parts = [{"type": "output_text", "text": "Sure, ", "annotations": []}, {"type": "refusal", "refusal": "I can't."}]
    item = {"id": "msg_1", "type": "message", "role": "assistant", "status": "completed", "content": parts}
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": [item],
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
    server.script(
        Reply.raw(
            [
                {
                    "type": "response.output_text.delta",
                    "sequence_number": 0,
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": "Sure, ",
                },
                {
                    "type": "response.refusal.delta",
                    "sequence_number": 1,
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 1,
                    "delta": "I can't.",
                },
                {"type": "response.output_item.done", "sequence_number": 2, "output_index": 0, "item": item},
                {"type": "response.completed", "sequence_number": 3, "response": response},
            ]
        )
    )
    events = await collect(make_client(server, "responses"), PROMPT)
    assert (
        output_items(events)
        == [Message("assistant", "Sure, I can't.", id="msg_1")]
        == [Message("assistant", text_deltas(events), id="msg_1")]
    )
    assert completed(events).stop_reason == STOP_REFUSAL


async def test_chat_tool_call_whose_name_and_id_repeat_in_every_chunk(server):
    # MiniMax behind NVIDIA NIM, Fireworks and some gateways resend the call's id and whole name
    # with each arguments chunk; the name came out doubled ("shellshell", an unknown tool).
    def call(arguments: str) -> dict:
        return chunk(
            {
                "tool_calls": [
                    {
                        "index": 0,
                        "id": "call_rep",
                        "type": "function",
                        "function": {"name": "shell", "arguments": arguments},
                    }
                ]
            }
        )

    server.script(Reply.raw([call('{"command"'), call(': "ls"}'), chunk({}, finish="tool_calls"), "[DONE]"]))
    events = await collect(make_client(server, "chat"), PROMPT)
    assert output_items(events) == [items.ToolCall("call_rep", "shell", '{"command": "ls"}')]


# 4. Stop reasons reach the turn: cut off (length / max_tokens / incomplete) and pause_turn.
async def test_chat_length_is_a_cut_off_answer(server):
    server.script(Reply.raw([chunk({"content": "The first half"}), chunk({}, finish="length"), "[DONE]"]))
    events = await collect(make_client(server, "chat"), PROMPT)
    assert output_items(events) == [Message("assistant", "The first half")]
    assert completed(events).stop_reason == STOP_MAX_TOKENS


@pytest.mark.parametrize(
    ("anthropic_reason", "expected"),
    [("max_tokens", STOP_MAX_TOKENS), ("pause_turn", STOP_PAUSED), ("end_turn", STOP_END)],
)
async def test_anthropic_stop_reasons(server, anthropic_reason, expected):
    server.script(Reply.raw(anthropic_events("Some text", anthropic_reason)))
    events = await collect(make_client(server, "anthropic"), PROMPT)
    assert output_items(events) == [Message("assistant", "Some text")]
    assert completed(events).stop_reason == expected


async def test_responses_incomplete_keeps_the_answer_and_says_why(server):
    item = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "incomplete",
        "content": [{"type": "output_text", "text": "Half an answer", "annotations": []}],
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "incomplete",
        "model": "m",
        "output": [item],
        "incomplete_details": {"reason": "max_output_tokens"},
        "usage": {"input_tokens": 5, "output_tokens": 9},
    }
    server.script(
        Reply.raw(
            [
                {
                    "type": "response.output_text.delta",
                    "sequence_number": 0,
                    "item_id": "msg_1",
                    "output_index": 0,
                    "content_index": 0,
                    "delta": "Half an answer",
                },
                {"type": "response.output_item.done", "sequence_number": 1, "output_index": 0, "item": item},
                {"type": "response.incomplete", "sequence_number": 2, "response": response},
            ]
        )
    )
    events = await collect(make_client(server, "responses"), PROMPT)
    assert output_items(events) == [Message("assistant", "Half an answer", id="msg_1")]
    assert completed(events).stop_reason == STOP_MAX_TOKENS and retries(events) == []


async def test_responses_output_only_in_the_final_response_is_the_answer(server):
    # Some Responses servers stream deltas (or nothing) and give the items only in
    # `response.completed`; the answer was dropped and the run ended with no message.
    item = {
        "id": "msg_1",
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": "The whole answer", "annotations": []}],
    }
    response = {
        "id": "resp_1",
        "object": "response",
        "status": "completed",
        "model": "m",
        "output": [item],
        "usage": {"input_tokens": 5, "output_tokens": 3},
    }
    server.script(
        Reply.raw(
            [
                {
                    "type": "response.created",
                    "sequence_number": 0,
                    "response": {**response, "status": "in_progress", "output": []},
                },
                {"type": "response.completed", "sequence_number": 1, "response": response},
            ]
        )
    )
    events = await collect(make_client(server, "responses"), PROMPT)
    assert output_items(events) == [Message("assistant", "The whole answer", id="msg_1")]
    assert completed(events).stop_reason == STOP_END


# 5. An Anthropic stream closed after `message_delta` carried the stop reason is complete; one cut
# before it is still retried.
async def test_anthropic_stream_closed_after_message_delta_is_complete(server):
    server.script(Reply.raw(anthropic_events("Whole answer.", "end_turn", message_stop=False), cut=True))
    events = await collect(make_client(server, "anthropic"), PROMPT)
    assert retries(events) == [] and len(server.requests) == 1
    assert output_items(events) == [Message("assistant", "Whole answer.")]


async def test_anthropic_stream_cut_before_the_stop_reason_is_retried(server):
    server.script(Reply.raw(anthropic_events("Half", "end_turn")[:4], cut=True), Reply(text="Whole."))
    events = await collect(make_client(server, "anthropic"), PROMPT)
    assert len(retries(events)) == 1
    assert [i.text for i in output_items(events)] == ["Whole."]


# 6. List-typed `content` with thinking parts (Mistral) is reasoning, not answer text.
async def test_chat_list_typed_thinking_content_is_reasoning(server):
    thinking = {"type": "thinking", "thinking": [{"type": "text", "text": "Let me think."}]}
    server.script(
        Reply.raw(
            [
                chunk({"role": "assistant", "content": [thinking]}),
                chunk({"content": [{"type": "text", "text": "The answer."}]}),
                chunk({"content": "!"}, finish="stop"),
                "[DONE]",
            ]
        )
    )
    events = await collect(make_client(server, "chat"), PROMPT)
    assert "".join(e.text for e in events if isinstance(e, ReasoningDelta)) == "Let me think."
    assert text_deltas(events) == "The answer.!"
    assert output_items(events) == [Reasoning("Let me think."), Message("assistant", "The answer.!")]
