"""Scripted replies for the fake model server: `Reply`, `ToolCall`, `Usage`.

A `Reply` describes one model turn independently of the wire protocol; the
renderers in `protocols.py` turn it into Responses / Chat Completions /
Anthropic Messages events.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Optional, Union

# A `kind` of "ok" streams normally; the others are faults.
KINDS = ("ok", "http_error", "cut", "context_length", "stream_error", "empty", "raw")


def estimate_tokens(n_chars_or_bytes: int) -> int:
    """The fake tokenizer: one token per 4 characters (or bytes), rounded up.

    Input tokens are `ceil(len(raw request body bytes) / 4)`, output tokens are
    `ceil(len(output characters) / 4)`. It is crude but deterministic, and the
    agent's own estimates (chars/4 is the usual rule of thumb) stay in the
    same ballpark, which is what compaction tests need.
    """
    return math.ceil(n_chars_or_bytes / 4) if n_chars_or_bytes > 0 else 0


@dataclass
class ToolCall:
    """A function/tool call the fake model makes.

    `arguments` may be a dict (JSON-encoded on the wire) or a raw string, sent
    verbatim, to emulate a model emitting malformed JSON. `call_id=None` means a
    generated deterministic id (`call_N` for OpenAI, `toolu_N` for Anthropic).
    """

    name: str
    arguments: Union[dict, str] = field(default_factory=dict)
    call_id: Optional[str] = None

    def arguments_json(self) -> str:
        if isinstance(self.arguments, str):
            return self.arguments
        return json.dumps(self.arguments, ensure_ascii=False)


@dataclass
class WebSearch:
    """A search the provider runs itself before the text: Responses `web_search_call`, Anthropic
    `server_tool_use` + `web_search_tool_result`. The text then cites every result
    (`url_citation` annotations, `citations_delta`s)."""

    query: str
    results: list[dict] = field(default_factory=list)  # {"title": ..., "url": ...}


@dataclass
class Usage:
    """Token usage to report, protocol-neutral.

    `input_tokens` is the WHOLE prompt, cached part included (OpenAI
    convention). The Anthropic renderer reports `input_tokens - cached -
    cache_creation` as `input_tokens`, plus `cache_read_input_tokens` and
    `cache_creation_input_tokens`, so every protocol sums to the same prompt.
    `output_tokens` includes `reasoning_tokens`. A field left as None is computed
    (see `estimate_tokens`).
    """

    input_tokens: Optional[int] = None
    cached_input_tokens: int = 0
    output_tokens: Optional[int] = None
    reasoning_tokens: Optional[int] = None
    cache_creation_input_tokens: int = 0


@dataclass
class Reply:
    """One scripted model turn (or fault). See the module docs of `tests.fake_server`.

    Text comes after reasoning and before tool calls. Text and JSON arguments
    are streamed in deltas of `chunk_size` characters with `delay` seconds
    between SSE events.
    """

    text: Optional[str] = None
    reasoning: Optional[str] = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    web_search: Optional[WebSearch] = None
    usage: Optional[Usage] = None
    chunk_size: int = 8
    delay: float = 0.0
    # Fault fields; use the constructors below rather than setting these.
    kind: str = "ok"
    status: int = 200
    retry_after: Optional[Union[int, float, str]] = None
    message: Optional[str] = None
    error_type: Optional[str] = None
    code: Optional[str] = None
    after_events: int = 0
    in_stream: bool = False
    max_tokens: int = 16000
    prompt_tokens: int = 17000
    events: list = field(default_factory=list)  # Reply.raw: (event name or None, payload) pairs

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"unknown Reply kind {self.kind!r}")
        self.tool_calls = [tc if isinstance(tc, ToolCall) else ToolCall(**tc) for tc in self.tool_calls]
        self.chunk_size = max(1, int(self.chunk_size))

    # ----------------------------------------------------------------- faults
    @classmethod
    def http_error(
        cls,
        status: int,
        retry_after: Optional[Union[int, float, str]] = None,
        message: Optional[str] = None,
        *,
        error_type: Optional[str] = None,
        code: Optional[str] = None,
    ) -> "Reply":
        """An HTTP error with the protocol's real error body shape.

        `error_type` / `code` override the per-status defaults (e.g. OpenAI 429
        defaults to type "requests", code "rate_limit_exceeded"; Anthropic 429
        to "rate_limit_error", 529 to "overloaded_error"). `retry_after` sets the
        `Retry-After` header.
        """
        return cls(
            kind="http_error", status=status, retry_after=retry_after, message=message, error_type=error_type, code=code
        )

    @classmethod
    def cut(cls, text: Optional[str] = "partial text", after_events: int = 3, **kwargs: Any) -> "Reply":
        """A 200 SSE stream that is closed abruptly after `after_events` events
        (no terminating zero-length chunk, so the client sees an incomplete
        chunked body). Other `Reply` fields (reasoning, tool_calls...) apply."""
        return cls(text=text, kind="cut", after_events=after_events, **kwargs)

    @classmethod
    def context_length_exceeded(
        cls, in_stream: bool = False, *, max_tokens: int = 16000, prompt_tokens: int = 17000
    ) -> "Reply":
        """The error each provider returns for a too-long prompt (HTTP 400).

        `in_stream=True` (Responses protocol only; others fall back to HTTP 400)
        sends a 200 stream ending in `response.failed` with error code
        `context_length_exceeded`."""
        return cls(kind="context_length", in_stream=in_stream, max_tokens=max_tokens, prompt_tokens=prompt_tokens)

    @classmethod
    def stream_error(
        cls, message: str = "Overloaded", after_events: int = 2, text: Optional[str] = "partial text", **kwargs: Any
    ) -> "Reply":
        """A 200 stream that reports an error mid-way, after `after_events` events,
        then ends cleanly: Responses `response.failed` (code `server_error`),
        Chat a `data: {"error": {...}}` chunk (no `[DONE]`), Anthropic an
        `event: error` with `overloaded_error` (override with `error_type=`)."""
        return cls(text=text, kind="stream_error", message=message, after_events=after_events, **kwargs)

    @classmethod
    def raw(cls, events: list, *, cut: bool = False) -> "Reply":
        """A 200 SSE stream of exactly `events`, each `(name or None, payload)` with the payload a
        JSON-able object or a string sent as is (`"[DONE]"`), or a bare payload (no `event:`
        line). Real providers' streams, byte for byte, faults included. `cut=True` closes the
        connection abruptly after the last event instead of ending the body cleanly."""
        pairs = [e if isinstance(e, tuple) else (None, e) for e in events]
        return cls(kind="raw", events=pairs, after_events=len(pairs) if cut else 0)

    @classmethod
    def empty(cls) -> "Reply":
        """A 200 SSE stream that ends cleanly without a single event (a server that dropped the
        request without saying so)."""
        return cls(kind="empty")

    # ---------------------------------------------------------------- helpers
    @property
    def is_fault(self) -> bool:
        return self.kind != "ok"

    def output_chars(self) -> int:
        """Characters the model 'generated': reasoning + text + tool names + arguments."""
        n = len(self.reasoning or "") + len(self.text or "")
        for tc in self.tool_calls:
            n += len(tc.name) + len(tc.arguments_json())
        return n

    def resolved_usage(self, request_input_tokens: int) -> Usage:
        """`self.usage` with every None field computed."""
        u = self.usage or Usage()
        reasoning = u.reasoning_tokens
        if reasoning is None:
            reasoning = estimate_tokens(len(self.reasoning or ""))
        output = u.output_tokens
        if output is None:
            output = estimate_tokens(self.output_chars())
        inp = u.input_tokens if u.input_tokens is not None else request_input_tokens
        return Usage(
            input_tokens=inp,
            cached_input_tokens=u.cached_input_tokens,
            output_tokens=output,
            reasoning_tokens=reasoning,
            cache_creation_input_tokens=u.cache_creation_input_tokens,
        )

    @classmethod
    def from_dict(cls, d: Union[dict, str]) -> "Reply":
        """Build a Reply from a JSON-ish dict (the `--script FILE.json` format).

        Keys: text, reasoning, tool_calls [{name, arguments, call_id}], usage {...},
        chunk_size, delay, and at most one fault: error {status, retry_after,
        message, type, code} | cut {after_events} | context_length_exceeded
        (true or {in_stream}) | stream_error {message, after_events}.
        A bare string is shorthand for {"text": ...}.
        """
        if isinstance(d, str):
            return cls(text=d)
        d = dict(d)
        common = {k: d[k] for k in ("text", "reasoning", "chunk_size", "delay") if k in d}
        if "tool_calls" in d:
            common["tool_calls"] = [ToolCall(**tc) for tc in d["tool_calls"]]
        if d.get("usage"):
            common["usage"] = Usage(**d["usage"])
        if d.get("error"):
            e = d["error"]
            return cls.http_error(
                int(e.get("status", 500)),
                e.get("retry_after"),
                e.get("message"),
                error_type=e.get("type"),
                code=e.get("code"),
            )
        if d.get("context_length_exceeded"):
            c = d["context_length_exceeded"]
            return cls.context_length_exceeded(**(c if isinstance(c, dict) else {}))
        if d.get("cut"):
            c = d["cut"] if isinstance(d["cut"], dict) else {}
            common.setdefault("text", "partial text")
            return cls(kind="cut", after_events=int(c.get("after_events", 3)), **common)
        if d.get("stream_error"):
            c = d["stream_error"] if isinstance(d["stream_error"], dict) else {}
            return cls(
                kind="stream_error",
                message=c.get("message", "Overloaded"),
                after_events=int(c.get("after_events", 2)),
                error_type=c.get("type"),
                **common,
            )
        return cls(**common)


# What `server.script()` accepts: a Reply, a str (shorthand for Reply(text=...)),
# or a callable taking the RecordedRequest and returning one of those.
ScriptItem = Union[Reply, str, Callable[[Any], Union[Reply, str]]]
