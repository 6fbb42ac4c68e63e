"""One prompt's events as stream-json messages: assistant blocks, tool results, partial
messages (``--include-partial-messages``) and the closing ``result``."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_cli import events as ev
from agent_cli.models.base import Usage
from agent_cli.models.pricing import price_for
from agent_cli.session.session import Session
from agent_cli.stream_json import messages as msg

Write = Callable[[dict], None]


class TurnTranslator:
    """Writes the messages of one prompt; ``result()`` closes it."""

    def __init__(self, session: Session, write: Write, partial: bool = False, schema: bool = False):
        self.session, self.write, self.partial, self.schema = session, write, partial, schema
        self.cwd = Path(session.config.cwd)
        self.started = time.monotonic()
        self.usage_before = session.total_usage
        self.requests = 0
        self.last_message: str | None = None
        self.notices: list[str] = []
        self.failure: tuple[str, str | None] | None = None  # (message, reason)
        self.aborted = False
        self.denials: list[dict[str, Any]] = []
        self.calls: dict[str, tuple[str, dict[str, Any]]] = {}  # call_id -> (our name, our arguments)
        self._message_id = self._new_message_id()  # the blocks of one model response share it
        self._after_count = False  # a response ended: its tool calls follow, then the next response's text
        self._after_tools = False  # its tool calls ran: whatever comes next is the next response
        self._block_open: str | None = None  # the partial block being streamed: "text" or "thinking"
        self._block_index = 0

    @staticmethod
    def _new_message_id() -> str:
        return f"msg_{uuid.uuid4().hex[:24]}"

    def _id(self, kind: str, parent: str | None) -> str:
        """The message id of a block: a new one where a new model response begins."""
        if parent is None and (self._after_tools or (self._after_count and kind != "tool_use")):
            self._message_id = self._new_message_id()
            self._after_count = self._after_tools = False
        return self._message_id

    # --- events ---------------------------------------------------------------------------

    def render(self, event: ev.Event, parent: str | None = None) -> None:
        sid = self.session.id
        match event:
            case ev.SubagentEvent(call_id=call_id, event=inner):
                self.render(inner, parent=call_id)
            case ev.TextDelta(text=text) if self.partial and parent is None:
                self._delta("text", {"type": "text_delta", "text": text})
            case ev.ReasoningDelta(text=text) if self.partial and parent is None:
                self._delta("thinking", {"type": "thinking_delta", "thinking": text})
            case ev.ReasoningDone(text=text) if text:
                self._close_block(parent)
                block = {"type": "thinking", "thinking": text, "signature": ""}
                self.write(msg.assistant(sid, self.session.model, block, parent, self._id("thinking", parent)))
            case ev.AgentMessage(text=text):
                self._close_block(parent)
                if parent is None:
                    self.last_message = text
                block = {"type": "text", "text": text}
                self.write(msg.assistant(sid, self.session.model, block, parent, self._id("text", parent)))
            case ev.ToolCallBegin(call_id=call_id, name=name, arguments=arguments):
                self._close_block(parent)
                self.calls[call_id] = (name, arguments)
                claude_name, claude_input = msg.claude_tool(name, arguments, self.cwd)
                block = {"type": "tool_use", "id": call_id, "name": claude_name, "input": claude_input}
                self.write(msg.assistant(sid, self.session.model, block, parent, self._id("tool_use", parent)))
            case ev.ToolCallEnd(call_id=call_id, output=output, success=success):
                self.write(msg.tool_result(sid, call_id, output, success, parent))
                self._after_tools = self._after_tools or parent is None
            case ev.TokenCount() if parent is None:
                self.requests += 1
                self._close_block(parent)
                self._end_message()
            case ev.Notice(text=text) if parent is None:
                self.notices.append(text)
            case ev.TurnComplete(last_message=last) if parent is None:
                self.last_message = last if last is not None else self.last_message
            case ev.TurnFailed(message=message, reason=reason) if parent is None:
                self.failure = (message, reason)
            case ev.InputRejected(message=message) if parent is None:
                self.failure = (message, None)
            case ev.TurnAborted() if parent is None:
                self.aborted = True
                self.write(msg.user_text(sid, "[Request interrupted by user]"))
            case ev.Error(message=message, fatal=True) if parent is None:
                self.failure = (message, None)

    def denied(self, call_id: str, tool_input: dict[str, Any]) -> None:
        name, _ = self.calls.get(call_id, ("", {}))
        claude_name, _ = msg.claude_tool(name, {}, self.cwd) if name else ("", {})
        self.denials.append({"tool_name": claude_name or name, "tool_use_id": call_id, "tool_input": tool_input})

    # --- partial messages ------------------------------------------------------------------

    def _delta(self, kind: str, delta: dict) -> None:
        sid = self.session.id
        if self._block_open is None and self._block_index == 0:
            message = {
                "id": self._id(kind, None),
                "type": "message",
                "role": "assistant",
                "model": self.session.model,
                "content": [],
                "stop_reason": None,
                "stop_sequence": None,
                "usage": msg.claude_usage(Usage()),
            }
            self.write(msg.stream_event(sid, {"type": "message_start", "message": message}))
        if self._block_open != kind:
            self._close_block(None)
            start = {"type": "text", "text": ""} if kind == "text" else {"type": "thinking", "thinking": ""}
            event = {"type": "content_block_start", "index": self._block_index, "content_block": start}
            self.write(msg.stream_event(sid, event))
            self._block_open = kind
        self.write(msg.stream_event(sid, {"type": "content_block_delta", "index": self._block_index, "delta": delta}))

    def _close_block(self, parent: str | None) -> None:
        if parent is not None or self._block_open is None:
            return
        self.write(msg.stream_event(self.session.id, {"type": "content_block_stop", "index": self._block_index}))
        self._block_open = None
        self._block_index += 1

    def _end_message(self) -> None:
        if self.partial and self._block_index:
            sid = self.session.id
            delta = {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_sequence": None}}
            self.write(msg.stream_event(sid, {**delta, "usage": {"output_tokens": 0}}))
            self.write(msg.stream_event(sid, {"type": "message_stop"}))
        self._after_count = True
        self._block_index = 0

    # --- the result ------------------------------------------------------------------------

    def result(self) -> dict:
        session = self.session
        used = _minus(session.total_usage, self.usage_before)
        duration = int((time.monotonic() - self.started) * 1000)
        if self.failure is not None:
            subtype = msg.FAILURE_SUBTYPES.get(self.failure[1] or "", "error_during_execution")
        else:
            subtype = "error_during_execution" if self.aborted else "success"
        text = self.last_message
        if text is None and self.notices and self.failure is None:
            text = "\n\n".join(self.notices)  # a /command with no model turn: its output is the result
        result = {
            "type": "result",
            "subtype": subtype,
            "is_error": subtype != "success",
            "duration_ms": duration,
            "duration_api_ms": duration,
            "num_turns": self.requests,
            "result": text if subtype == "success" else (self.failure[0] if self.failure else (text or "")),
            "stop_reason": "end_turn" if subtype == "success" else None,
            "session_id": session.id,
            "total_cost_usd": self._cost(used),
            "usage": msg.claude_usage(used),
            "modelUsage": {
                session.model: {
                    "inputTokens": max(0, used.input_tokens - used.cached_input_tokens),
                    "outputTokens": used.output_tokens,
                    "cacheReadInputTokens": used.cached_input_tokens,
                    "cacheCreationInputTokens": 0,
                    "webSearchRequests": 0,
                    "costUSD": self._cost(used),
                    "contextWindow": session.window.tokens,
                }
            },
            "permission_denials": self.denials,
            "uuid": msg.new_uuid(),
        }
        if self.failure is not None:
            result["errors"] = [self.failure[0]]
        elif self.aborted:
            result["errors"] = ["interrupted"]
        if self.schema and subtype == "success" and text:
            try:
                result["structured_output"] = json.loads(text)
            except ValueError:
                pass
        return result

    def _cost(self, used: Usage) -> float:
        try:
            price = price_for(self.session.model, self.session.config.raw.get("model_prices"))
        except ValueError:
            price = None
        return round(price.cost(used), 6) if price is not None else 0.0


def _minus(after: Usage, before: Usage) -> Usage:
    return Usage(
        after.input_tokens - before.input_tokens,
        after.cached_input_tokens - before.cached_input_tokens,
        after.output_tokens - before.output_tokens,
        after.reasoning_tokens - before.reasoning_tokens,
    )
