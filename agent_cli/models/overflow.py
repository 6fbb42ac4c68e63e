"""The context window a server names in its "prompt too long" error.

llama.cpp puts it in the body (``exceed_context_size_error`` with ``n_ctx``); OpenAI, vLLM and
OpenRouter say "maximum context length is N tokens"; Anthropic "prompt is too long: N tokens > M
maximum". Knowing it lets the session compact to the real window instead of guessing.
"""

from __future__ import annotations

import json
import re

_PATTERNS = (
    re.compile(r"maximum context length is (\d[\d,]*) tokens", re.IGNORECASE),  # OpenAI, vLLM, OpenRouter
    re.compile(r"prompt is too long: \d[\d,]* tokens > (\d[\d,]*)", re.IGNORECASE),  # Anthropic
    re.compile(r"context (?:length|window|size) (?:of|is) (\d[\d,]*)", re.IGNORECASE),  # LM Studio and others
    re.compile(r"\bn_ctx\D{1,4}(\d+)", re.IGNORECASE),  # llama.cpp text forms
)


def window_from_message(message: object) -> int | None:
    for pattern in _PATTERNS:
        match = pattern.search(str(message or ""))
        if match:
            return _positive(match.group(1).replace(",", ""))
    return None


def window_from_error(body: object) -> int | None:
    """The window from an error body (a dict, JSON text or plain text); None if it names none."""
    if isinstance(body, str):
        try:
            body = json.loads(body)
        except ValueError:
            return window_from_message(body)
    if not isinstance(body, dict):
        return None
    inner = body.get("error")
    for fields in (inner, body):
        if isinstance(fields, dict) and (n_ctx := _positive(fields.get("n_ctx"))):
            return n_ctx
    message = inner.get("message") if isinstance(inner, dict) else inner if isinstance(inner, str) else None
    return window_from_message(message or body.get("message") or body.get("detail"))


def _positive(value: object) -> int | None:
    try:
        number = int(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None
