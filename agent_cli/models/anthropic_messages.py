"""Anthropic Messages API client (``wire_api = "anthropic"``).

The API wants strictly alternating user/assistant turns, tool results in user turns, and
signed thinking blocks sent back ahead of the tool use they led to. Prompt caching is
explicit, so the stable prefix (tools, system, conversation so far) carries breakpoints.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import aclosing
from dataclasses import dataclass, field
from typing import Any

from agent_cli.items import Image, Item, Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.base import (
    STOP_END,
    STOP_MAX_TOKENS,
    STOP_PAUSED,
    STOP_REFUSAL,
    Completed,
    OutputItem,
    Prompt,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolSpec,
    Usage,
)
from agent_cli.models.client_base import StreamingClient, int_field
from agent_cli.models.errors import TransientError
from agent_cli.models.image_parts import base64_data, missing_note
from agent_cli.models.model_info import uses_adaptive_thinking
from agent_cli.models.web_search import AnthropicSearches, anthropic_tool

DEFAULT_MAX_TOKENS = 8192
CACHE = {"type": "ephemeral"}
# Reasoning id marking a redacted thinking block, whose opaque data rides in encrypted_content.
REDACTED_THINKING_ID = "anthropic:redacted_thinking"
# Thinking budgets for the effort names the other providers use.
_THINKING_BUDGETS = {"minimal": 1024, "low": 2048, "medium": 8192, "high": 24_576, "xhigh": 32_000}
_ADAPTIVE_EFFORTS = {"minimal": "low", "low": "low", "medium": "medium", "high": "high", "xhigh": "xhigh", "max": "max"}


def _tool_input(arguments: str) -> dict[str, Any]:
    try:
        value = json.loads(arguments) if arguments.strip() else {}
    except (ValueError, RecursionError):  # too deep to parse: the call already got an error output
        value = None
    # The API insists on an object; a model's malformed arguments already got an error output.
    return value if isinstance(value, dict) else {}


def _image_blocks(images: tuple[Image, ...]) -> list[dict[str, Any]]:
    blocks = []
    for image in images:
        data = base64_data(image)
        if data is None:
            blocks.append({"type": "text", "text": missing_note(image)})
        else:
            blocks.append({"type": "image", "source": {"type": "base64", "media_type": image.mime_type, "data": data}})
    return blocks


def _blocks_for(item: Item) -> tuple[str, list[dict[str, Any]]] | None:
    """(role, content blocks) for one item; None for items this API cannot take."""
    if isinstance(item, Message) and item.images:
        text = [{"type": "text", "text": item.text}] if item.text else []
        return "user", text + _image_blocks(item.images)
    if isinstance(item, ToolOutput) and item.images:  # tool results may hold images
        text = [{"type": "text", "text": item.output}] if item.output else []
        block = {"type": "tool_result", "tool_use_id": item.call_id, "content": text + _image_blocks(item.images)}
        if not item.success:
            block["is_error"] = True
        return "user", [block]
    mapped = _block_for(item)
    return (mapped[0], [mapped[1]]) if mapped is not None else None


def _block_for(item: Item) -> tuple[str, dict[str, Any]] | None:
    """(role, content block) for one item; None for items this API cannot take."""
    if isinstance(item, Message):
        if not item.text:  # the API rejects empty text blocks
            return None
        role = "assistant" if item.role == "assistant" else "user"
        return role, {"type": "text", "text": item.text}
    if isinstance(item, Reasoning):
        if item.id == REDACTED_THINKING_ID and item.encrypted_content:
            return "assistant", {"type": "redacted_thinking", "data": item.encrypted_content}
        if item.signature:  # unsigned reasoning (another provider's) cannot be verified
            return "assistant", {"type": "thinking", "thinking": item.text, "signature": item.signature}
        return None
    if isinstance(item, ToolCall):
        return "assistant", {
            "type": "tool_use",
            "id": item.call_id,
            "name": item.name,
            "input": _tool_input(item.arguments),
        }
    if isinstance(item, ToolOutput):
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": item.call_id, "content": item.output}
        if not item.success:
            block["is_error"] = True
        return "user", block
    return None


def anthropic_messages(items: list[Item]) -> list[dict[str, Any]]:
    """Our conversation as alternating turns, with cache breakpoints on the last two user turns.

    The breakpoint on the previous user turn keeps the last request's cache entry reachable
    even when a turn added more blocks than the cache's lookback window.
    """
    turns: list[dict[str, Any]] = []
    for item in items:
        mapped = _blocks_for(item)
        if mapped is None:
            continue
        role, blocks = mapped
        if turns and turns[-1]["role"] == role:
            turns[-1]["content"].extend(blocks)
        else:
            turns.append({"role": role, "content": blocks})
    for turn in turns:
        if turn["role"] == "user":  # tool results must lead their user turn
            turn["content"].sort(key=lambda b: b["type"] != "tool_result")
    if turns and turns[0]["role"] != "user":
        turns.insert(0, {"role": "user", "content": [{"type": "text", "text": "(continued)"}]})
    user_turns = [turn for turn in turns if turn["role"] == "user"]
    for turn in user_turns[-2:]:
        turn["content"][-1] = {**turn["content"][-1], "cache_control": CACHE}
    return turns


def tool_params(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    params = [{"name": t.name, "description": t.description, "input_schema": t.parameters} for t in tools]
    if params:
        params[-1]["cache_control"] = CACHE
    return params


@dataclass
class _UsageCounts:
    input: int = 0
    cache_read: int = 0
    cache_write: int = 0
    output: int = 0
    thinking: int = 0

    def update(self, data: Any) -> None:
        """Take the counts a message_start or message_delta reports (later ones are cumulative)."""
        if not isinstance(data, dict):
            return
        if "input_tokens" in data and data["input_tokens"] is not None:
            self.input = int_field(data, "input_tokens")
        if data.get("cache_read_input_tokens") is not None:
            self.cache_read = int_field(data, "cache_read_input_tokens")
        if data.get("cache_creation_input_tokens") is not None:
            self.cache_write = int_field(data, "cache_creation_input_tokens")
        if data.get("output_tokens") is not None:
            self.output = int_field(data, "output_tokens")
        self.thinking = int_field(data, "output_tokens_details", "thinking_tokens") or self.thinking

    def usage(self) -> Usage:
        return Usage(
            input_tokens=self.input + self.cache_read + self.cache_write,
            cached_input_tokens=self.cache_read,
            output_tokens=self.output,
            reasoning_tokens=self.thinking,
        )


@dataclass
class _Block:
    kind: str
    parts: list[str] = field(default_factory=list)
    signature: str | None = None
    data: str | None = None
    call_id: str = ""
    name: str = ""
    initial_input: Any = None

    def item(self) -> Item | None:
        text = "".join(self.parts)
        if self.kind == "text":
            return Message("assistant", text) if text else None
        if self.kind == "thinking":
            return Reasoning(text, signature=self.signature)
        if self.kind == "redacted_thinking":
            return Reasoning("", id=REDACTED_THINKING_ID, encrypted_content=self.data)
        if self.kind == "tool_use":
            if not text and self.initial_input:
                text = json.dumps(self.initial_input, ensure_ascii=False)
            return ToolCall(self.call_id, self.name, text or "{}")
        return None


def _start_block(block: dict[str, Any]) -> _Block:
    kind = block.get("type") or ""
    started = _Block(
        kind,
        signature=block.get("signature") or None,
        data=block.get("data"),
        call_id=block.get("id") or "",
        name=block.get("name") or "",
        initial_input=block.get("input"),
    )
    if kind == "text" and block.get("text"):
        started.parts.append(block["text"])
    if kind == "thinking" and block.get("thinking"):
        started.parts.append(block["thinking"])
    return started


_STOP_REASONS = {
    "max_tokens": STOP_MAX_TOKENS,
    "model_context_window_exceeded": STOP_MAX_TOKENS,
    "pause_turn": STOP_PAUSED,
    "refusal": STOP_REFUSAL,
}


class AnthropicMessagesClient(StreamingClient):
    default_base_url = "https://api.anthropic.com"
    sdk = "anthropic"
    path = "/v1/messages"

    def request(self, prompt: Prompt) -> dict[str, Any]:
        """The request body for this prompt."""
        max_tokens = self.max_output_tokens or DEFAULT_MAX_TOKENS
        params: dict[str, Any] = {"model": self.model, "messages": anthropic_messages(prompt.items), "stream": True}
        # Later features add their own fields here (server tools, output formats): the body goes
        # out as built here.
        if prompt.instructions:
            params["system"] = [{"type": "text", "text": prompt.instructions, "cache_control": CACHE}]
        if prompt.tools:
            params["tools"] = tool_params(prompt.tools)
        if search_tool := anthropic_tool(prompt.web_search):
            params.setdefault("tools", []).append(search_tool)
        if prompt.forced_tool:  # thinking does not combine with a forced tool
            params["tool_choice"] = {"type": "tool", "name": prompt.forced_tool}
        effort = (self.reasoning_effort or "").lower()
        if effort and effort != "none" and not prompt.forced_tool:
            if uses_adaptive_thinking(self.model):
                params["thinking"] = {"type": "adaptive"}
                params["output_config"] = {"effort": _ADAPTIVE_EFFORTS.get(effort, "medium")}
            else:
                budget = _THINKING_BUDGETS.get(effort, _THINKING_BUDGETS["medium"])
                params["thinking"] = {"type": "enabled", "budget_tokens": budget}
                max_tokens = max(max_tokens, budget + 4096)  # the budget must fit under max_tokens
        params["max_tokens"] = max_tokens
        return params

    async def _attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        # The raw events, not messages.stream(): its accumulator gives no more than these do,
        # and a retry must drop a half-read attempt's blocks, which ours own.
        blocks: dict[int, _Block] = {}
        items: list[Item] = []
        counts = _UsageCounts()
        searches = AnthropicSearches()  # server-side web search blocks and citations (models/web_search.py)
        response_id: str | None = None
        stop: str | None = None
        try:
            async with aclosing(self.events(self.request(prompt))) as events:
                async for data in events:
                    kind = data.get("type")
                    if kind == "message_start":
                        message = data.get("message") or {}
                        response_id = message.get("id")
                        counts.update(message.get("usage"))
                    elif kind == "content_block_start":
                        if not searches.start(data.get("index", 0), data.get("content_block") or {}):
                            blocks[data.get("index", 0)] = _start_block(data.get("content_block") or {})
                    elif kind == "content_block_delta":
                        block = blocks.get(data.get("index", 0))
                        if searches.delta(data.get("index", 0), data.get("delta") or {}):
                            pass
                        elif block is not None:
                            event_out = _apply_delta(block, data.get("delta") or {})
                            if event_out is not None:
                                yield event_out
                    elif kind == "content_block_stop":
                        if (search := searches.stop(data.get("index", 0))) is not None:
                            yield search
                        block = blocks.pop(data.get("index", 0), None)
                        item = block.item() if block is not None else None
                        if item is not None:
                            items.append(item)
                    elif kind == "message_delta":
                        counts.update(data.get("usage"))
                        stop = (data.get("delta") or {}).get("stop_reason") or stop
                    elif kind == "message_stop":
                        stop = stop or "end_turn"
                        break
        except Exception:
            # A response is complete once its stop reason arrived: a connection closed after
            # `message_delta` (no `message_stop`) loses nothing. Before that, it is retried.
            if stop is None:
                raise
        if stop is None:
            raise TransientError("the stream ended before the response was complete")
        for block in blocks.values():  # blocks the server never closed
            if (item := block.item()) is not None:
                items.append(item)
        if (cited := searches.citations()) is not None:
            yield cited
        for item in items:
            yield OutputItem(item)
        yield Completed(counts.usage(), response_id, _STOP_REASONS.get(stop, STOP_END), self.last_request_id)


def _apply_delta(block: _Block, delta: dict[str, Any]) -> StreamEvent | None:
    """Record one content delta; return the event to surface, if any."""
    kind = delta.get("type")
    if kind == "text_delta" and delta.get("text"):
        block.parts.append(delta["text"])
        return TextDelta(delta["text"])
    if kind == "thinking_delta" and delta.get("thinking"):
        block.parts.append(delta["thinking"])
        return ReasoningDelta(delta["thinking"])
    if kind == "signature_delta":
        block.signature = delta.get("signature") or block.signature
    elif kind == "input_json_delta" and delta.get("partial_json"):
        block.parts.append(delta["partial_json"])
    return None
