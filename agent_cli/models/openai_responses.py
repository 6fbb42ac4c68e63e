"""OpenAI Responses API client (``wire_api = "responses"``).

Stateless: ``store=False``, the whole conversation is sent each time, and reasoning items
travel back with their encrypted content so reasoning models keep their chain of thought.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import aclosing
from typing import Any

from agent_cli.items import Image, Item, Message, Reasoning, ToolCall, ToolOutput
from agent_cli.models.base import (
    OUTPUT_SCHEMA_NAME,
    STOP_CONTENT_FILTER,
    STOP_END,
    STOP_MAX_TOKENS,
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
from agent_cli.models.image_parts import data_url, missing_note
from agent_cli.models.model_info import is_reasoning_model
from agent_cli.models.web_search import responses_citations, responses_search, responses_tool

_REASONING_DELTAS = ("response.reasoning_summary_text.delta", "response.reasoning_text.delta")


def input_items(items: list[Item]) -> list[dict[str, Any]]:
    """Our conversation items as Responses ``input`` items."""
    out: list[dict[str, Any]] = []
    for item in items:
        if isinstance(item, Message):
            if item.role == "assistant":
                if item.text:
                    out.append(_message("assistant", "output_text", item.text))
            elif item.images:
                out.append({"type": "message", "role": item.role, "content": _input_parts(item.text, item.images)})
            else:
                out.append(_message(item.role, "input_text", item.text))
        elif isinstance(item, Reasoning):
            # With store=False only encrypted reasoning can be sent back; reasoning from other
            # providers (or without encrypted content) would be rejected as an unknown item.
            if item.encrypted_content and item.id:
                summary = [{"type": "summary_text", "text": item.text}] if item.text else []
                out.append(
                    {
                        "type": "reasoning",
                        "id": item.id,
                        "summary": summary,
                        "encrypted_content": item.encrypted_content,
                    }
                )
        elif isinstance(item, ToolCall):
            out.append(
                {"type": "function_call", "call_id": item.call_id, "name": item.name, "arguments": item.arguments}
            )
        elif isinstance(item, ToolOutput):
            # The output may be a list of content parts, images included.
            output = _input_parts(item.output, item.images) if item.images else item.output
            out.append({"type": "function_call_output", "call_id": item.call_id, "output": output})
    return out


def _input_parts(text: str, images: tuple[Image, ...]) -> list[dict[str, Any]]:
    parts = [{"type": "input_text", "text": text}] if text else []
    for image in images:
        url = data_url(image)
        # `detail` is required in message content; "auto" is what the token estimate assumes.
        parts.append(
            {"type": "input_image", "image_url": url, "detail": "auto"}
            if url
            else {"type": "input_text", "text": missing_note(image)}
        )
    return parts


def _message(role: str, content_type: str, text: str) -> dict[str, Any]:
    return {"type": "message", "role": role, "content": [{"type": content_type, "text": text}]}


def tool_params(tools: list[ToolSpec]) -> list[dict[str, Any]]:
    return [
        {"type": "function", "name": t.name, "description": t.description, "parameters": t.parameters, "strict": False}
        for t in tools
    ]


def output_item(data: dict[str, Any]) -> Item | None:
    """A finished Responses output item as one of ours; None for kinds we do not keep."""
    kind = data.get("type")
    if kind == "message":
        parts = data.get("content") or []
        # A refusal (alone, or after some text) is part of the answer, marked by the stop reason.
        text = "".join(
            (p.get("text") if p.get("type") == "output_text" else p.get("refusal")) or ""
            for p in parts
            if isinstance(p, dict) and p.get("type") in ("output_text", "refusal")
        )
        return Message("assistant", text, id=data.get("id")) if text else None
    if kind == "reasoning":
        summary = [p.get("text") or "" for p in data.get("summary") or []]
        if not any(summary):  # models that stream raw reasoning text put it in `content`
            summary = [p.get("text") or "" for p in data.get("content") or []]
        return Reasoning(
            "\n\n".join(s for s in summary if s), id=data.get("id"), encrypted_content=data.get("encrypted_content")
        )
    if kind == "function_call":
        return ToolCall(
            data.get("call_id") or data.get("id") or "",
            data.get("name") or "",
            data.get("arguments") or "{}",
            id=data.get("id"),
        )
    return None


def usage_from(data: dict[str, Any] | None) -> Usage | None:
    if not isinstance(data, dict):
        return None
    return Usage(
        input_tokens=int_field(data, "input_tokens"),
        cached_input_tokens=int_field(data, "input_tokens_details", "cached_tokens"),
        output_tokens=int_field(data, "output_tokens"),
        reasoning_tokens=int_field(data, "output_tokens_details", "reasoning_tokens"),
    )


def stop_reason(response: dict[str, Any], items: list[Item]) -> str:
    """The stop reason of a finished (or incomplete) response."""
    if response.get("status") == "incomplete":
        reason = (response.get("incomplete_details") or {}).get("reason")
        return STOP_CONTENT_FILTER if reason == "content_filter" else STOP_MAX_TOKENS
    refused = any(
        p.get("type") == "refusal"
        for o in response.get("output") or []
        if isinstance(o, dict)
        for p in o.get("content") or []
        if isinstance(p, dict)
    )
    return STOP_REFUSAL if refused else STOP_END


class OpenAIResponsesClient(StreamingClient):
    default_base_url = "https://api.openai.com/v1"
    sdk = "openai"
    path = "/responses"

    def request(self, prompt: Prompt) -> dict[str, Any]:
        """The request body for this prompt."""
        params: dict[str, Any] = {
            "model": self.model,
            "input": input_items(prompt.items),
            "store": False,
            "stream": True,
        }
        # Later features add their own fields here (the provider's tools, output formats): the
        # body goes out as built here.
        if prompt.instructions:
            params["instructions"] = prompt.instructions
        if prompt.tools:
            params["tools"] = tool_params(prompt.tools)
            params["tool_choice"] = "auto"
            params["parallel_tool_calls"] = True
        if search_tool := responses_tool(prompt.web_search):
            params.setdefault("tools", []).append(search_tool)
            params["tool_choice"] = "auto"
        if is_reasoning_model(self.model):
            # Non-reasoning models reject both parameters.
            params["include"] = ["reasoning.encrypted_content"]
            reasoning: dict[str, Any] = {"summary": "auto"}
            if self.reasoning_effort:
                reasoning["effort"] = self.reasoning_effort
            params["reasoning"] = reasoning
        if self.max_output_tokens:
            params["max_output_tokens"] = self.max_output_tokens
        if prompt.output_schema is not None:
            params["text"] = {
                "format": {
                    "type": "json_schema",
                    "name": OUTPUT_SCHEMA_NAME,
                    "schema": prompt.output_schema,
                    "strict": True,
                }
            }
        return params

    async def _attempt(self, prompt: Prompt) -> AsyncIterator[StreamEvent]:
        items: list[Item] = []
        summary_index: dict[str, int] = {}
        finished: dict[str, Any] | None = None
        items_done = False
        async with aclosing(self.events(self.request(prompt))) as events:
            async for data in events:
                kind = data.get("type")
                if kind in ("response.output_text.delta", "response.refusal.delta"):
                    if data.get("delta"):
                        yield TextDelta(data["delta"])
                elif kind in _REASONING_DELTAS:
                    # Separate summary parts the way the finished item will join them.
                    key, index = str(data.get("item_id")), data.get("summary_index", 0)
                    if summary_index.setdefault(key, index) != index:
                        summary_index[key] = index
                        yield ReasoningDelta("\n\n")
                    if data.get("delta"):
                        yield ReasoningDelta(data["delta"])
                elif kind == "response.output_item.done":
                    items_done = True
                    for found in (
                        responses_search(data.get("item") or {}),
                        responses_citations(data.get("item") or {}),
                    ):
                        if found is not None:
                            yield found  # a provider-side web search, the answer's sources
                    item = output_item(data.get("item") or {})
                    if item is not None:
                        items.append(item)
                elif kind in ("response.completed", "response.incomplete"):
                    # An incomplete response (the output limit, a content filter) is an answer
                    # cut off: its items count, and the stop reason says why it ended.
                    finished = data.get("response") or {}
                    break
                elif kind == "response.failed":
                    raise self.stream_failure(data.get("response") or {})
                elif kind == "error" or data.get("error"):
                    raise self.stream_failure(data)
        if finished is None:
            raise TransientError("the stream ended before the response was complete")
        if not items_done:  # some servers give the items only in the final response
            output = [data for data in finished.get("output") or [] if isinstance(data, dict)]
            items = [item for item in map(output_item, output) if item is not None]
        for item in items:
            yield OutputItem(item)
        yield Completed(
            usage_from(finished.get("usage")), finished.get("id"), stop_reason(finished, items), self.last_request_id
        )
