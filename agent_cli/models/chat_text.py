"""What local models put in the answer text that is not answer: reasoning and tool calls.

When a server does not parse its model's template, ``<think>…</think>`` reasoning and tool
calls in the template's own markup reach us as plain content. :class:`ContentSplitter` sorts a
stream of content deltas into answer text, reasoning, and tool-call markup (held back, never
shown as text); :func:`parse_tool_calls` turns the markup into calls.

Markup known: Hermes / Qwen ``<tool_call>{json}</tool_call>`` (and Qwen3-Coder's
``<function=name><parameter=p>v</parameter></function>`` inside it), Mistral
``[TOOL_CALLS][{json}, …]`` and ``[TOOL_CALLS]name[ARGS]{json}``, Llama 3 ``<|python_tag|>{json}``
and ``<function=name>{json}</function>``, and a whole answer that is only a call as JSON.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

THINK_OPEN, THINK_CLOSE = "<think>", "</think>"
# opening marker -> closing marker (None: the call runs to the end of the content)
_TOOL_MARKERS: dict[str, str | None] = {
    "<tool_call>": "</tool_call>",
    "<function=": "</function>",
    "[TOOL_CALLS]": None,
    "<|python_tag|>": None,
}
_OPENERS = (THINK_OPEN, *_TOOL_MARKERS)
_END_TOKENS = ("<|eom_id|>", "<|eot_id|>", "</s>")


@dataclass
class Split:
    text: str = ""
    reasoning: str = ""


@dataclass
class ContentSplitter:
    """Sorts content deltas into answer text, reasoning and tool-call markup, as they stream."""

    state: str = "text"  # "text", "think", or an opening tool marker
    pending: str = ""  # held back: it may be the start of a marker
    markup: list[str] = field(default_factory=list)  # finished tool-call blocks, markers included
    _block: list[str] = field(default_factory=list)
    _after_think: bool = False  # the blank lines that follow </think> belong to neither part

    def feed(self, delta: str) -> Split:
        out = Split()
        buffer = self.pending + delta
        self.pending = ""
        while buffer:
            if self.state == "text":
                if self._after_think:
                    buffer = buffer.lstrip("\n")
                    self._after_think = not buffer
                    if not buffer:
                        return out
                index, marker = _earliest(buffer, _OPENERS)
                if marker is None:
                    keep = _partial_suffix(buffer, _OPENERS)
                    out.text += buffer[: len(buffer) - keep]
                    self.pending = buffer[len(buffer) - keep :]
                    return out
                out.text += buffer[:index]
                buffer = buffer[index + len(marker) :]
                self.state = "think" if marker == THINK_OPEN else marker
                self._block = [] if marker == THINK_OPEN else [marker]
            elif self.state == "think":
                index = buffer.find(THINK_CLOSE)
                if index < 0:
                    keep = _partial_suffix(buffer, (THINK_CLOSE,))
                    out.reasoning += buffer[: len(buffer) - keep]
                    self.pending = buffer[len(buffer) - keep :]
                    return out
                out.reasoning += buffer[:index]
                buffer = buffer[index + len(THINK_CLOSE) :]
                self.state, self._after_think = "text", True
            else:
                close = _TOOL_MARKERS[self.state]
                if close is None or (index := buffer.find(close)) < 0:
                    self._block.append(buffer)
                    return out
                self._block.append(buffer[: index + len(close)])
                self.markup.append("".join(self._block))
                buffer = buffer[index + len(close) :]
                self.state, self._block = "text", []
        return out

    def finish(self) -> Split:
        """The end of the content: what was held back, and any block left open."""
        out = Split()
        if self.state == "think":
            out.reasoning = self.pending
        elif self.state == "text":
            out.text = self.pending
        else:
            self._block.append(self.pending)
            self.markup.append("".join(self._block))
        self.pending, self._block, self.state = "", [], "text"
        return out


def _earliest(text: str, markers: tuple[str, ...]) -> tuple[int, str | None]:
    found = [(text.find(marker), marker) for marker in markers if marker in text]
    return min(found) if found else (-1, None)


def _partial_suffix(text: str, markers: tuple[str, ...]) -> int:
    """Length of the longest end of ``text`` that could begin one of ``markers``."""
    best = 0
    for marker in markers:
        for size in range(min(len(marker) - 1, len(text)), best, -1):
            if marker.startswith(text[-size:]):
                best = size
                break
    return best


# --- tool calls from markup ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TextCall:
    name: str
    arguments: str  # JSON text


def parse_tool_calls(markup: str, tool_names: set[str]) -> list[TextCall] | None:
    """The calls in one markup block, or None when it is not a call to a known tool."""
    body = markup
    for end in _END_TOKENS:
        body = body.replace(end, "")
    for marker in ("<tool_call>", "</tool_call>", "<|python_tag|>"):
        body = body.replace(marker, "")
    body = body.strip()
    if body.startswith("[TOOL_CALLS]"):
        calls = _mistral(body[len("[TOOL_CALLS]") :].strip())
    elif body.startswith("<function="):
        calls = _function_tags(body)
    else:
        calls = _json_calls(body)
    if not calls or any(call.name not in tool_names for call in calls):
        return None
    return calls


def whole_answer_calls(text: str, tool_names: set[str]) -> list[TextCall] | None:
    """An answer that is nothing but a call as JSON (Llama 3 without its python tag)."""
    stripped = text.strip()
    if not stripped.startswith(("{", "[")) or not tool_names:
        return None
    calls = _json_calls(stripped)
    if not calls or any(call.name not in tool_names for call in calls):
        return None
    return calls


def _json_values(text: str) -> list[Any] | None:
    """Every JSON value in ``text``, one after another; None if anything else is there."""
    decoder = json.JSONDecoder()
    values, index = [], 0
    while index < len(text):
        while index < len(text) and text[index] in " \t\r\n,;":
            index += 1
        if index >= len(text):
            break
        try:
            value, index = decoder.raw_decode(text, index)
        except ValueError:
            return None
        values.append(value)
    return values


def _json_calls(text: str) -> list[TextCall] | None:
    values = _json_values(text)
    if not values:
        return None
    flat = [entry for value in values for entry in (value if isinstance(value, list) else [value])]
    calls = [_call_from(entry) for entry in flat]
    return None if any(call is None for call in calls) else calls  # type: ignore[return-value]


def _call_from(value: Any) -> TextCall | None:
    if not isinstance(value, dict):
        return None
    if isinstance(value.get("function"), dict):  # {"type": "function", "function": {...}}
        value = value["function"]
    name = value.get("name")
    if not isinstance(name, str) or not name:
        return None
    arguments = next((value[key] for key in ("arguments", "parameters", "args", "input") if key in value), {})
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except (ValueError, RecursionError):
            return TextCall(name, arguments)  # the tool reports the malformed JSON to the model
    return TextCall(name, json.dumps(arguments, ensure_ascii=False))


_MISTRAL_ARGS = re.compile(r"^\s*([\w.-]+)\s*(?:\[CALL_ID\]\s*\w+\s*)?\[ARGS\]", re.ASCII)


def _mistral(body: str) -> list[TextCall] | None:
    if body.startswith(("[", "{")):
        return _json_calls(body)
    calls = []
    for part in body.split("[TOOL_CALLS]"):  # newer templates: name[ARGS]{json}, repeated
        match = _MISTRAL_ARGS.match(part)
        if not match:
            return None
        values = _json_values(part[match.end() :].strip())
        if not values or not isinstance(values[0], dict) or len(values) != 1:
            return None
        calls.append(TextCall(match.group(1), json.dumps(values[0], ensure_ascii=False)))
    return calls


_FUNCTION = re.compile(r"<function=([\w.-]+)>(.*?)</function>", re.DOTALL)
_PARAMETER = re.compile(r"<parameter=([\w.-]+)>\n?(.*?)\n?</parameter>", re.DOTALL)


def _function_tags(body: str) -> list[TextCall] | None:
    calls = []
    for name, inner in _FUNCTION.findall(body):
        inner = inner.strip()
        if inner.startswith("{"):  # Llama 3.1: <function=name>{json}</function>
            values = _json_values(inner)
            if not values or not isinstance(values[0], dict):
                return None
            calls.append(TextCall(name, json.dumps(values[0], ensure_ascii=False)))
            continue
        params = {key: _parameter_value(value) for key, value in _PARAMETER.findall(inner)}
        calls.append(TextCall(name, json.dumps(params, ensure_ascii=False)))
    return calls or None


def _parameter_value(raw: str) -> Any:
    """Qwen3-Coder writes every value as text; numbers and JSON objects or arrays come back
    typed (not `true`, which may well be a shell command)."""
    stripped = raw.strip()
    if stripped[:1] not in ("{", "[", "-") and not stripped.isdigit():
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw
