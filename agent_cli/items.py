"""Provider-neutral conversation items.

Every model client translates these to and from its wire format; the rest of the program
(history, compaction, session files, front ends) sees only these. Each item serializes to a
flat JSON object tagged with ``type`` and round-trips losslessly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal

Role = Literal["user", "assistant", "developer"]


@dataclass(frozen=True, slots=True)
class Message:
    """Text from the user, the assistant, or the harness (developer role)."""

    role: Role
    text: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class Reasoning:
    """The model's reasoning. Opaque provider fields are kept so it can be sent back."""

    text: str
    id: str | None = None
    encrypted_content: str | None = None  # OpenAI Responses
    signature: str | None = None  # Anthropic thinking blocks


@dataclass(frozen=True, slots=True)
class ToolCall:
    """A function call requested by the model. ``arguments`` is the raw JSON text."""

    call_id: str
    name: str
    arguments: str
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolOutput:
    """The result of a tool call, as the model will read it."""

    call_id: str
    output: str
    success: bool = True


Item = Message | Reasoning | ToolCall | ToolOutput

_TYPES: dict[str, type] = {
    "message": Message,
    "reasoning": Reasoning,
    "tool_call": ToolCall,
    "tool_output": ToolOutput,
}
_NAMES = {cls: name for name, cls in _TYPES.items()}


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


def developer(text: str) -> Message:
    return Message("developer", text)


def item_to_dict(item: Item) -> dict[str, Any]:
    data = {"type": _NAMES[type(item)]}
    for field in dataclasses.fields(item):
        value = getattr(item, field.name)
        if value is not None:
            data[field.name] = value
    return data


def item_from_dict(data: dict[str, Any]) -> Item:
    """Inverse of :func:`item_to_dict`. Raises ``ValueError`` on anything malformed."""
    if not isinstance(data, dict):
        raise ValueError(f"item must be a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    cls = _TYPES.get(kind)  # type: ignore[arg-type]
    if cls is None:
        raise ValueError(f"unknown item type {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    try:
        item = cls(**{k: v for k, v in data.items() if k in names})
    except TypeError as exc:
        raise ValueError(f"malformed {kind} item: {exc}") from None
    if isinstance(item, Message) and item.role not in ("user", "assistant", "developer"):
        raise ValueError(f"unknown message role {item.role!r}")
    return item
