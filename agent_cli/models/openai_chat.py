"""Chat Completions client for any OpenAI-compatible server (``wire_api = "chat"``).

Written for the lowest common denominator (Ollama, vLLM, llama.cpp, LM Studio, OpenRouter):
harness instructions go out as ``system`` (many servers reject ``developer``), reasoning is
never sent back, and usage, call ids and tool-call indexes may all be missing from the stream.
"""

from __future__ import annotations

import uuid
from collections.abc import AsyncGenerator, AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from agent_cli.items import Image, Item, Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.base import (
    OUTPUT_SCHEMA_NAME,
    STOP_CONTENT_FILTER,
    STOP_END,
    STOP_MAX_TOKENS,
    STOP_REFUSAL,
    ClientNotice,
    Completed,
    OutputItem,
    Prompt,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolSpec,
    Usage,
)
from agent_cli.models.chat_quirks import ChatQuirks, no_tools_notice
from agent_cli.models.chat_text import ContentSplitter, Split, parse_tool_calls, whole_answer_calls
from agent_cli.models.client_base import StreamingClient, int_field
from agent_cli.models.errors import ModelError, TransientError
from agent_cli.models.image_parts import data_url, missing_note, tool_images_note

# Servers name the streamed reasoning differently: DeepSeek, vLLM and llama.cpp use
# `reasoning_content`, OpenRouter and Ollama `reasoning`.
_REASONING_FIELDS = ("reasoning_content", "reasoning")
_STOP_REASONS = {"length": STOP_MAX_TOKENS, "content_filter": STOP_CONTENT_FILTER}
# Content parts that carry reasoning when `content` is a list (Mistral's `thinking` chunks).
_THINKING_PARTS = ("thinking", "reasoning")


def content_pieces(content: Any) -> tuple[str, str]:
    """(answer text, reasoning) of a delta's ``content``: a string, or a list of typed parts
    (Mistral's ``{"type": "thinking", "thinking": [{"type": "text", "text": ...}]}``)."""
    if isinstance(content, str):
        return content, ""
    if not isinstance(content, list):
        return "", ""
    text, reasoning = [], []
    for part in content:
        if not isinstance(part, dict):
            continue
        if part.get("type") in _THINKING_PARTS:
            reasoning.append(_part_text(part.get(part["type"])) or _part_text(part.get("text")))
        elif part.get("type") == "text":
            text.append(_part_text(part.get("text")))
    return "".join(text), "".join(reasoning)


def _part_text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_part_text(v.get("text")) if isinstance(v, dict) else _part_text(v) for v in value)
    return ""


def chat_messages(instructions: str, items: list[Item]) -> list[dict[str, Any]]:
    """Our conversation as Chat Completions messages."""
    system = [instructions] if instructions else []
    rest = list(items)
    # Harness messages that precede the conversation join the first system message: several
    # chat templates (Qwen's among them) reject a system message anywhere but first.
    while rest and isinstance(first := rest[0], Message) and first.role == "developer":
        system.append(first.text)
        rest.pop(0)
    messages: list[dict[str, Any]] = []
    if system:
        messages.append({"role": "system", "content": "\n\n".join(system)})
    tool_images: list[dict[str, Any]] = []  # tool messages are text only: images follow them
    for item in rest:
        if tool_images and not isinstance(item, ToolOutput):
            messages.append({"role": "user", "content": tool_images})
            tool_images = []
        if isinstance(item, Message):
            if item.role == "assistant":
                if item.text:
                    messages.append({"role": "assistant", "content": item.text})
            else:
                role = "system" if item.role == "developer" else "user"
                content = _content_parts(item.text, item.images) if item.images else item.text
                messages.append({"role": role, "content": content})
        elif isinstance(item, ToolCall):
            call = {
                "id": item.call_id,
                "type": "function",
                "function": {"name": item.name, "arguments": item.arguments},
            }
            last = messages[-1] if messages else None
            # Calls join the assistant message they followed, as the API models one turn.
            if last is not None and last["role"] == "assistant":
                last.setdefault("tool_calls", []).append(call)
            else:
                messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif isinstance(item, ToolOutput):
            messages.append({"role": "tool", "tool_call_id": item.call_id, "content": item.output})
            if item.images:
                tool_images += _content_parts(tool_images_note(item.call_id), item.images)
        # Reasoning is not sent back: no compatible server accepts it in the request.
    if tool_images:
        messages.append({"role": "user", "content": tool_images})
    return messages


def _content_parts(text: str, images: tuple[Image, ...]) -> list[dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for image in images:
        url = data_url(image)
        parts.append(
            {"type": "image_url", "image_url": {"url": url}} if url else {"type": "text", "text": missing_note(image)}
        )
    return parts


def tool_params(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "function": {"name": t.name, "description": t.description, "parameters": t.parameters}}
        for t in tools
    ]


def usage_from(data: Any) -> Usage | None:
    if not isinstance(data, dict):
        return None
    return Usage(
        input_tokens=int_field(data, "prompt_tokens"),
        cached_input_tokens=int_field(data, "prompt_tokens_details", "cached_tokens"),
        output_tokens=int_field(data, "completion_tokens"),
        reasoning_tokens=int_field(data, "completion_tokens_details", "reasoning_tokens"),
    )


@dataclass
class _PendingCall:
    call_id: str | None = None
    name: str = ""
    arguments: list[str] = field(default_factory=list)

    def finish(self) -> ToolCall:
        call_id = self.call_id or f"call_{uuid.uuid4().hex[:24]}"  # some servers send no id
        return ToolCall(call_id, self.name, "".join(self.arguments) or "{}")


@dataclass
class _ChatAccumulator:
    """Everything one streamed completion said, assembled from its chunks."""

    text: list[str] = field(default_factory=list)
    reasoning: list[str] = field(default_factory=list)
    calls: dict[int, _PendingCall] = field(default_factory=dict)
    finish_reason: str | None = None
    refused: bool = False
    usage: Usage | None = None
    response_id: str | None = None
    chunks: int = 0
    splitter: ContentSplitter = field(default_factory=ContentSplitter)

    def add_content(self, split: Split) -> list[StreamEvent]:
        """Content as the model wrote it, sorted into answer text and <think> reasoning."""
        self.text.append(split.text)
        self.reasoning.append(split.reasoning)
        return [
            *([ReasoningDelta(split.reasoning)] if split.reasoning else []),
            *([TextDelta(split.text)] if split.text else []),
        ]

    def calls_from_text(self, tool_names: set[str]) -> None:
        """Tool calls the server left in the content as template markup become real calls."""
        if self.calls or not tool_names:
            return
        found = []
        for markup in self.splitter.markup:
            calls = parse_tool_calls(markup, tool_names)
            if calls is None:  # not a call after all: it stays part of the answer
                self.text.append(markup)
            else:
                found += calls
        if not found and (calls := whole_answer_calls("".join(self.text), tool_names)):
            self.text, found = [], calls
        for index, call in enumerate(found):
            self.calls[index] = _PendingCall(None, call.name, [call.arguments])

    def add_tool_deltas(self, deltas: list[dict[str, Any]]) -> None:
        for delta in deltas:
            index = delta.get("index")
            next_index = max(self.calls) + 1 if self.calls else 0
            if not isinstance(index, int):  # no index: an id starts a call, else it continues
                index = next_index if delta.get("id") or not self.calls else max(self.calls)
            pending = self.calls.get(index)
            if pending is not None and delta.get("id") and pending.call_id and delta["id"] != pending.call_id:
                index, pending = next_index, None  # a server reusing an index for a new call
            if pending is None:
                pending = self.calls[index] = _PendingCall()
            function = delta.get("function") or {}
            pending.call_id = pending.call_id or delta.get("id")
            name = function.get("name") or ""
            if name != pending.name:  # some servers resend the whole name with every chunk
                pending.name += name
            if function.get("arguments"):
                pending.arguments.append(function["arguments"])

    def items(self) -> list[Item]:
        out: list[Item] = []
        if reasoning := "".join(self.reasoning):
            out.append(Reasoning(reasoning))
        text = "".join(self.text)
        if self.splitter.markup:
            text = text.strip("\n")  # the line breaks around the calls taken out of it
        if text:
            out.append(Message("assistant", text))
        out.extend(self.calls[index].finish() for index in sorted(self.calls))
        return out


class OpenAIChatClient(StreamingClient):
    default_base_url = "https://api.openai.com/v1"
    sdk = "openai"
    path = "/chat/completions"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.quirks = ChatQuirks()  # what this server turned out not to support (shared: registry.py)
        self._incomplete_streams = 0

    def stream(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        self._incomplete_streams = 0
        return super().stream(prompt)

    def request(self, prompt: Prompt) -> dict[str, Any]:
        """The request body for this prompt."""
        params: dict[str, Any] = {
            "model": self.model,
            "messages": chat_messages(prompt.instructions, prompt.items),
            "stream": True,
        }
        # Later features add their own fields here; the body goes out as built here.
        if self.quirks.include_usage:
            params["stream_options"] = {"include_usage": True}
        if prompt.tools and self.quirks.tools:  # some servers reject an empty tools list
            params["tools"] = tool_params(prompt.tools)
        if self.max_output_tokens:
            # OpenAI itself wants the newer name; compatible servers reliably know the old one.
            key = "max_completion_tokens" if self.provider in ("openai", "openai-chat") else "max_tokens"
            params[key] = self.max_output_tokens
        if self.reasoning_effort:
            params["reasoning_effort"] = self.reasoning_effort
        if prompt.output_schema is not None:
            params["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": OUTPUT_SCHEMA_NAME, "schema": prompt.output_schema, "strict": True},
            }
        return params

    async def _attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        acc = _ChatAccumulator()
        # The raw chunks, not chat.completions.stream(): its accumulator keeps only the fields
        # the SDK knows, and compatible servers stream reasoning in fields of their own.
        async with aclosing(self._events(prompt)) as events:
            async for data in events:
                if isinstance(data, ClientNotice):
                    yield data
                    continue
                acc.chunks += 1
                acc.response_id = acc.response_id or data.get("id")
                if isinstance(data.get("usage"), dict):  # a usage-only chunk, or on the last choice
                    acc.usage = usage_from(data["usage"])
                for choice in data.get("choices") or []:
                    if (choice.get("index") or 0) != 0:  # n=1; a missing index means the only choice
                        continue
                    for out in self._delta(acc, choice.get("delta") or {}):
                        yield out
                    acc.finish_reason = choice.get("finish_reason") or acc.finish_reason
        # The stream ended ([DONE] or the body's end; the SDK reads both the same way). Without a
        # single chunk it was cut off; a finish reason is optional (some hosted servers send none).
        if acc.chunks == 0:
            self._stream_incomplete(acc)
        for event in acc.add_content(acc.splitter.finish()):
            yield event
        acc.calls_from_text({tool.name for tool in prompt.tools} if self.quirks.tools else set())
        for item in acc.items():
            yield OutputItem(item)
        stop = STOP_REFUSAL if acc.refused else _STOP_REASONS.get(acc.finish_reason or "", STOP_END)
        yield Completed(acc.usage, acc.response_id, stop, self.last_request_id)

    @staticmethod
    def _delta(acc: _ChatAccumulator, delta: dict[str, Any]) -> list[StreamEvent]:
        out: list[StreamEvent] = []
        for name in _REASONING_FIELDS:
            if isinstance(delta.get(name), str) and delta[name]:
                acc.reasoning.append(delta[name])
                out.append(ReasoningDelta(delta[name]))
                break
        text, reasoning = content_pieces(delta.get("content"))
        if reasoning:
            acc.reasoning.append(reasoning)
            out.append(ReasoningDelta(reasoning))
        if text:
            out += acc.add_content(acc.splitter.feed(text))
        if isinstance(delta.get("refusal"), str) and delta["refusal"]:
            acc.refused = True  # not streamed as answer text: the turn reports it as a refusal
            acc.text.append(delta["refusal"])  # kept in the history, as the model said it
        if delta.get("tool_calls"):
            acc.add_tool_deltas(delta["tool_calls"])
        return out

    async def _events(self, prompt: Prompt) -> AsyncGenerator[dict[str, Any] | ClientNotice]:
        """The answer's chunks; a server that rejects ``stream_options`` or ``tools`` is asked
        again without them (before anything was streamed)."""
        while True:
            params = self.request(prompt)
            events = self.events(params)
            try:
                first = await anext(events, None)
            except Exception as exc:
                dropped = self.quirks.adapt(exc, params)
                if dropped is None:
                    raise
                if dropped == "tools":
                    yield ClientNotice(no_tools_notice(self.model, self.url))
                continue
            try:
                if first is not None:
                    yield first
                    async for event in events:
                        yield event
            finally:
                await events.aclose()
            return

    def _stream_incomplete(self, acc: _ChatAccumulator) -> None:
        """A stream that ended without an error and without finishing: retried once, then a
        clear error naming the server (a server in this state rarely recovers by itself)."""
        self._incomplete_streams += 1
        what = "an empty response" if acc.chunks == 0 else "a response that stopped before it was complete"
        if self._incomplete_streams < 2:
            raise TransientError(f"the server sent {what}")
        raise ModelError(
            f"{self._error_context().base_url} sent {what} twice for model {self.model}, without an "
            "error; check that the server is healthy and has the model loaded (see its log)."
        )
