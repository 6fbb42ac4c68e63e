"""Wire renderers: one per protocol, turning a `Reply` into SSE events.

Each `render_*` returns `(events, final)`: `events` is a list of
`(event_name | None, payload)` (payload a dict, or the raw string `[DONE]`),
`final` is the equivalent non-streaming response body. Shapes follow the
official SDKs' models (openai.types.responses, openai.types.chat,
anthropic.types).
"""

from __future__ import annotations

import base64
import copy
import json
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from .script import Reply, Usage

Event = tuple[Optional[str], Any]


@dataclass
class Ctx:
    """Per-request rendering context."""

    body: dict
    input_tokens: int
    new_id: Callable[[str], str]  # new_id("resp") -> "resp_3"; tool-call ids are counted separately
    new_call_id: Callable[[str], str]
    chat_reasoning_field: str = "reasoning_content"

    @property
    def model(self) -> str:
        m = self.body.get("model") if isinstance(self.body, dict) else None
        return m if isinstance(m, str) else "fake-model"


def _chunks(s: str, n: int) -> list[str]:
    return [s[i : i + n] for i in range(0, len(s), n)]


def _has_message(reply: Reply) -> bool:
    return bool(reply.text) or not reply.tool_calls


def sse_bytes(event: Event) -> bytes:
    """Encode one event as an SSE frame (`event:` line only when named)."""
    name, payload = event
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {data}\n\n".encode("utf-8")


def encrypted_reasoning(text: str) -> str:
    """Deterministic stand-in for an encrypted reasoning blob / thinking signature."""
    return "gAAAAfake" + base64.b64encode(text.encode("utf-8")).decode("ascii")


# --------------------------------------------------------------------- Responses
def render_responses(reply: Reply, ctx: Ctx) -> tuple[list[Event], dict]:
    body, u = ctx.body, reply.resolved_usage(ctx.input_tokens)
    events: list[Event] = []

    def ev(type_: str, **fields: Any) -> None:
        events.append((type_, {"type": type_, **fields, "sequence_number": len(events)}))

    include = body.get("include") or []
    want_enc = isinstance(include, list) and "reasoning.encrypted_content" in include
    created = int(time.time())
    base = {
        "id": ctx.new_id("resp"),
        "object": "response",
        "created_at": created,
        "status": "in_progress",
        "background": False,
        "error": None,
        "incomplete_details": None,
        "instructions": body.get("instructions"),
        "max_output_tokens": body.get("max_output_tokens"),
        "model": ctx.model,
        "output": [],
        "parallel_tool_calls": body.get("parallel_tool_calls", True),
        "previous_response_id": body.get("previous_response_id"),
        "reasoning": body.get("reasoning"),
        "store": body.get("store", True),
        "temperature": body.get("temperature", 1.0),
        "text": body.get("text") or {"format": {"type": "text"}},
        "tool_choice": body.get("tool_choice", "auto"),
        "tools": body.get("tools") or [],
        "top_p": body.get("top_p", 1.0),
        "truncation": "disabled",
        "usage": None,
        "user": None,
        "metadata": body.get("metadata") or {},
    }
    ev("response.created", response=copy.deepcopy(base))
    ev("response.in_progress", response=copy.deepcopy(base))
    if reply.kind == "context_length":
        failed = dict(
            base,
            status="failed",
            error={
                "code": "context_length_exceeded",
                "message": "Your input exceeds the context window of this model. Please adjust your input and try again.",
            },
        )
        ev("response.failed", response=failed)
        return events, failed

    output: list[dict] = []
    if reply.reasoning is not None:
        oi, rid, text = len(output), ctx.new_id("rs"), reply.reasoning
        ev("response.output_item.added", output_index=oi, item={"id": rid, "type": "reasoning", "summary": []})
        if text:
            part = {"type": "summary_text", "text": ""}
            common = {"item_id": rid, "output_index": oi, "summary_index": 0}
            ev("response.reasoning_summary_part.added", **common, part=part)
            for piece in _chunks(text, reply.chunk_size):
                ev("response.reasoning_summary_text.delta", **common, delta=piece)
            ev("response.reasoning_summary_text.done", **common, text=text)
            ev("response.reasoning_summary_part.done", **common, part={"type": "summary_text", "text": text})
        item = {"id": rid, "type": "reasoning", "summary": [{"type": "summary_text", "text": text}] if text else []}
        if want_enc:
            item["encrypted_content"] = encrypted_reasoning(text)
        ev("response.output_item.done", output_index=oi, item=item)
        output.append(item)
    if reply.web_search is not None:
        output.append(_responses_web_search(reply.web_search, ev, ctx, len(output)))
    annotations = _url_citations(reply)
    if _has_message(reply):
        oi, mid, text = len(output), ctx.new_id("msg"), reply.text or ""
        common = {"item_id": mid, "output_index": oi, "content_index": 0}
        ev(
            "response.output_item.added",
            output_index=oi,
            item={"id": mid, "type": "message", "status": "in_progress", "role": "assistant", "content": []},
        )
        ev(
            "response.content_part.added",
            **common,
            part={"type": "output_text", "text": "", "annotations": [], "logprobs": []},
        )
        for piece in _chunks(text, reply.chunk_size):
            ev("response.output_text.delta", **common, delta=piece, logprobs=[])
        for index, annotation in enumerate(annotations):
            ev("response.output_text.annotation.added", **common, annotation_index=index, annotation=annotation)
        ev("response.output_text.done", **common, text=text, logprobs=[])
        part = {"type": "output_text", "text": text, "annotations": annotations, "logprobs": []}
        ev("response.content_part.done", **common, part=part)
        item = {"id": mid, "type": "message", "status": "completed", "role": "assistant", "content": [part]}
        ev("response.output_item.done", output_index=oi, item=item)
        output.append(item)
    for tc in reply.tool_calls:
        oi, fid, args = len(output), ctx.new_id("fc"), tc.arguments_json()
        call_id = tc.call_id or ctx.new_call_id("call")
        item = {
            "id": fid,
            "type": "function_call",
            "status": "in_progress",
            "arguments": "",
            "call_id": call_id,
            "name": tc.name,
        }
        ev("response.output_item.added", output_index=oi, item=dict(item))
        for piece in _chunks(args, reply.chunk_size):
            ev("response.function_call_arguments.delta", item_id=fid, output_index=oi, delta=piece)
        ev("response.function_call_arguments.done", item_id=fid, output_index=oi, arguments=args)
        item.update(status="completed", arguments=args)
        ev("response.output_item.done", output_index=oi, item=item)
        output.append(item)

    if reply.kind == "stream_error":
        del events[max(reply.after_events, 0) :]
        failed = dict(base, status="failed", error={"code": "server_error", "message": reply.message})
        ev("response.failed", response=failed)
        return events, failed
    usage = {
        "input_tokens": u.input_tokens,
        "input_tokens_details": {
            "cached_tokens": u.cached_input_tokens,
            "cache_write_tokens": u.cache_creation_input_tokens,
        },
        "output_tokens": u.output_tokens,
        "output_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
        "total_tokens": u.input_tokens + u.output_tokens,
    }
    final = dict(base, status="completed", output=output, usage=usage, completed_at=int(time.time()))
    ev("response.completed", response=final)
    return events, final


def _responses_web_search(search, ev, ctx: Ctx, oi: int) -> dict:
    """A `web_search_call` item: added, in_progress, searching, completed, done (with its sources)."""
    wid = ctx.new_id("ws")
    ev(
        "response.output_item.added",
        output_index=oi,
        item={
            "id": wid,
            "type": "web_search_call",
            "status": "in_progress",
            "action": {"type": "search", "query": search.query},
        },
    )
    for phase in ("in_progress", "searching", "completed"):
        ev(f"response.web_search_call.{phase}", item_id=wid, output_index=oi)
    sources = [{"type": "url", "url": r["url"]} for r in search.results]
    item = {
        "id": wid,
        "type": "web_search_call",
        "status": "completed",
        "action": {"type": "search", "query": search.query, "sources": sources},
    }
    ev("response.output_item.done", output_index=oi, item=item)
    return item


def _url_citations(reply: Reply) -> list[dict]:
    if reply.web_search is None:
        return []
    end = len(reply.text or "")
    return [
        {"type": "url_citation", "start_index": 0, "end_index": end, "url": r["url"], "title": r["title"]}
        for r in reply.web_search.results
    ]


# --------------------------------------------------------------------- Chat Completions
def chat_usage(u: Usage) -> dict:
    return {
        "prompt_tokens": u.input_tokens,
        "completion_tokens": u.output_tokens,
        "total_tokens": u.input_tokens + u.output_tokens,
        "prompt_tokens_details": {"cached_tokens": u.cached_input_tokens},
        "completion_tokens_details": {"reasoning_tokens": u.reasoning_tokens},
    }


def render_chat(reply: Reply, ctx: Ctx) -> tuple[list[Event], dict]:
    body, u = ctx.body, reply.resolved_usage(ctx.input_tokens)
    opts = body.get("stream_options")
    include_usage = isinstance(opts, dict) and bool(opts.get("include_usage"))
    cid, created = ctx.new_id("chatcmpl").replace("_", "-"), int(time.time())
    head = {
        "id": cid,
        "object": "chat.completion.chunk",
        "created": created,
        "model": ctx.model,
        "system_fingerprint": "fp_fake",
    }
    events: list[Event] = []

    def chunk(delta: dict, finish: Optional[str] = None) -> None:
        c = dict(head, choices=[{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}])
        if include_usage:
            c["usage"] = None
        events.append((None, c))

    chunk({"role": "assistant", "content": ""})
    for piece in _chunks(reply.reasoning or "", reply.chunk_size):
        chunk({ctx.chat_reasoning_field: piece})
    for piece in _chunks(reply.text or "", reply.chunk_size):
        chunk({"content": piece})
    calls = []
    for i, tc in enumerate(reply.tool_calls):
        call_id, args = tc.call_id or ctx.new_call_id("call"), tc.arguments_json()
        calls.append({"id": call_id, "type": "function", "function": {"name": tc.name, "arguments": args}})
        chunk(
            {
                "tool_calls": [
                    {"index": i, "id": call_id, "type": "function", "function": {"name": tc.name, "arguments": ""}}
                ]
            }
        )
        for piece in _chunks(args, reply.chunk_size):
            chunk({"tool_calls": [{"index": i, "function": {"arguments": piece}}]})
    finish = "tool_calls" if calls else "stop"
    chunk({}, finish)
    if reply.kind == "stream_error":
        del events[max(reply.after_events, 0) :]
        events.append(
            (
                None,
                {
                    "error": {
                        "message": reply.message,
                        "type": reply.error_type or "server_error",
                        "param": None,
                        "code": reply.code,
                    }
                },
            )
        )
        return events, {}
    if include_usage:
        events.append((None, dict(head, choices=[], usage=chat_usage(u))))
    events.append((None, "[DONE]"))
    message: dict[str, Any] = {
        "role": "assistant",
        "content": reply.text if reply.text or not calls else None,
        "refusal": None,
    }
    if reply.reasoning:
        message[ctx.chat_reasoning_field] = reply.reasoning
    if calls:
        message["tool_calls"] = calls
    final = {
        "id": cid,
        "object": "chat.completion",
        "created": created,
        "model": ctx.model,
        "system_fingerprint": "fp_fake",
        "usage": chat_usage(u),
        "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
    }
    return events, final


# --------------------------------------------------------------------- Anthropic Messages
def render_anthropic(reply: Reply, ctx: Ctx) -> tuple[list[Event], dict]:
    u = reply.resolved_usage(ctx.input_tokens)
    uncached = max(0, u.input_tokens - u.cached_input_tokens - u.cache_creation_input_tokens)
    start_usage = {
        "input_tokens": uncached,
        "cache_creation_input_tokens": u.cache_creation_input_tokens,
        "cache_read_input_tokens": u.cached_input_tokens,
        "output_tokens": 1,
    }
    message = {
        "id": ctx.new_id("msg"),
        "type": "message",
        "role": "assistant",
        "model": ctx.model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": start_usage,
    }
    events: list[Event] = [("message_start", {"type": "message_start", "message": copy.deepcopy(message)})]
    blocks: list[dict] = []

    def block(start: dict, deltas: list[dict], final: dict) -> None:
        i = len(blocks)
        events.append(("content_block_start", {"type": "content_block_start", "index": i, "content_block": start}))
        if i == 0:
            events.append(("ping", {"type": "ping"}))
        for d in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": i, "delta": d}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": i}))
        blocks.append(final)

    if reply.reasoning is not None:
        text, sig = reply.reasoning, encrypted_reasoning(reply.reasoning)
        deltas = [{"type": "thinking_delta", "thinking": p} for p in _chunks(text, reply.chunk_size)]
        deltas.append({"type": "signature_delta", "signature": sig})
        block(
            {"type": "thinking", "thinking": "", "signature": ""},
            deltas,
            {"type": "thinking", "thinking": text, "signature": sig},
        )
    search = reply.web_search
    if search is not None:
        sid, query = ctx.new_call_id("srvtoolu"), json.dumps({"query": search.query})
        block(
            {"type": "server_tool_use", "id": sid, "name": "web_search", "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in _chunks(query, reply.chunk_size)],
            {"type": "server_tool_use", "id": sid, "name": "web_search", "input": {"query": search.query}},
        )
        results = [
            {
                "type": "web_search_result",
                "url": r["url"],
                "title": r["title"],
                "encrypted_content": encrypted_reasoning(r["url"]),
                "page_age": None,
            }
            for r in search.results
        ]
        result_block = {"type": "web_search_tool_result", "tool_use_id": sid, "content": results}
        block(result_block, [], result_block)
    if _has_message(reply):
        text = reply.text or ""
        citations = [
            {
                "type": "web_search_result_location",
                "url": r["url"],
                "title": r["title"],
                "encrypted_index": encrypted_reasoning(r["title"]),
                "cited_text": text[:150],
            }
            for r in (search.results if search is not None else [])
        ]
        start = {"type": "text", "text": ""} if search is None else {"type": "text", "text": "", "citations": []}
        final = (
            {"type": "text", "text": text} if search is None else {"type": "text", "text": text, "citations": citations}
        )
        block(
            start,
            [{"type": "citations_delta", "citation": c} for c in citations]
            + [{"type": "text_delta", "text": p} for p in _chunks(text, reply.chunk_size)],
            final,
        )
    for tc in reply.tool_calls:
        tid, args = tc.call_id or ctx.new_call_id("toolu"), tc.arguments_json()
        try:
            parsed = json.loads(args)
        except ValueError:
            parsed = {}
        block(
            {"type": "tool_use", "id": tid, "name": tc.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": p} for p in _chunks(args, reply.chunk_size)],
            {"type": "tool_use", "id": tid, "name": tc.name, "input": parsed},
        )
    if reply.kind == "stream_error":
        del events[max(reply.after_events, 0) :]
        events.append(
            (
                "error",
                {"type": "error", "error": {"type": reply.error_type or "overloaded_error", "message": reply.message}},
            )
        )
        return events, {}
    stop_reason = "tool_use" if reply.tool_calls else "end_turn"
    delta_usage: dict[str, Any] = {"output_tokens": u.output_tokens}
    if search is not None:
        delta_usage["server_tool_use"] = {"web_search_requests": 1}
    if u.reasoning_tokens:
        delta_usage["output_tokens_details"] = {"thinking_tokens": u.reasoning_tokens}
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "usage": delta_usage,
                "delta": {"stop_reason": stop_reason, "stop_sequence": None},
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    final = dict(
        message, content=blocks, stop_reason=stop_reason, usage=dict(start_usage, output_tokens=u.output_tokens)
    )
    return events, final


RENDERERS = {"responses": render_responses, "chat": render_chat, "anthropic": render_anthropic}


# --------------------------------------------------------------------- errors
_OPENAI_ERRORS = {  # status -> (type, code, message)
    400: ("invalid_request_error", None, "Invalid request."),
    401: (
        "invalid_request_error",
        "invalid_api_key",
        "Incorrect API key provided: x. You can find your API key at https://platform.openai.com/account/api-keys.",
    ),
    403: (
        "invalid_request_error",
        "unsupported_country_region_territory",
        "Country, region, or territory not supported",
    ),
    404: (
        "invalid_request_error",
        "model_not_found",
        "The model `{model}` does not exist or you do not have access to it.",
    ),
    429: ("requests", "rate_limit_exceeded", "Rate limit reached for {model}. Please try again in 1s."),
    500: ("server_error", None, "The server had an error while processing your request. Sorry about that!"),
    503: ("server_error", None, "The server is overloaded or not ready yet."),
}
_ANTHROPIC_ERRORS = {  # status -> (type, message)
    400: ("invalid_request_error", "Invalid request."),
    401: ("authentication_error", "invalid x-api-key"),
    402: ("billing_error", "Your credit balance is too low."),
    403: ("permission_error", "Your API key does not have permission to use the specified resource."),
    404: ("not_found_error", "model: {model}"),
    413: ("request_too_large", "Request exceeds the maximum allowed number of bytes."),
    429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit."),
    500: ("api_error", "Internal server error"),
    529: ("overloaded_error", "Overloaded"),
}


def error_body(
    protocol: str,
    status: int,
    model: str,
    message: Optional[str] = None,
    error_type: Optional[str] = None,
    code: Optional[str] = None,
    param: Optional[str] = None,
    request_id: str = "req_fake",
) -> dict:
    """The JSON error body the real provider sends for `status`."""
    if protocol == "anthropic":
        d_type, d_msg = _ANTHROPIC_ERRORS.get(
            status, ("api_error" if status >= 500 else "invalid_request_error", f"HTTP {status}")
        )
        return {
            "type": "error",
            "error": {"type": error_type or d_type, "message": (message or d_msg).replace("{model}", model)},
            "request_id": request_id,
        }
    d_type, d_code, d_msg = _OPENAI_ERRORS.get(
        status, ("server_error" if status >= 500 else "invalid_request_error", None, f"HTTP {status}")
    )
    return {
        "error": {
            "message": (message or d_msg).replace("{model}", model),
            "type": error_type or d_type,
            "param": param,
            "code": code if code is not None else d_code,
        }
    }


def context_length_body(protocol: str, model: str, max_tokens: int, prompt_tokens: int) -> dict:
    """HTTP 400 body for a prompt longer than the context window."""
    if protocol == "anthropic":
        return error_body(protocol, 400, model, f"prompt is too long: {prompt_tokens} tokens > {max_tokens} maximum")
    msg = (
        f"This model's maximum context length is {max_tokens} tokens. However, your messages resulted in "
        f"{prompt_tokens} tokens. Please reduce the length of the messages."
    )
    return error_body(
        protocol,
        400,
        model,
        msg,
        code="context_length_exceeded",
        param="input" if protocol == "responses" else "messages",
    )
