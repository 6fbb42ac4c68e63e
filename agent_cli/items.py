"""Provider-neutral conversation items.

Every model client translates these to and from its wire format; the rest of the program
(history, compaction, session files, front ends) sees only these. Each item serializes to a
flat JSON object tagged with ``type`` and round-trips losslessly.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Literal

Role = Literal["user", "assistant", "developer"]


@dataclass(frozen=True, slots=True)
class Image:
    """An image shown to the model, already sized for every provider (agent_cli/files/images.py).

    Session files keep only this reference: the bytes are stored once under
    ``$AGENT_HOME/images/<sha256>.<ext>`` and ride along in memory as ``data`` (None when the
    stored file is gone; the model then gets the placeholder).
    """

    sha256: str
    mime_type: str
    width: int
    height: int
    name: str = ""
    data: bytes | None = field(default=None, compare=False, repr=False)

    @property
    def placeholder(self) -> str:
        """What stands in for the image where it is not sent: ``[image: name, W x H]``."""
        return f"[image: {self.name or 'image'}, {self.width} x {self.height}]"


@dataclass(frozen=True, slots=True)
class Message:
    """Text from the user, the assistant, or the harness (developer role), with any images."""

    role: Role
    text: str
    id: str | None = None
    images: tuple[Image, ...] = ()
    # What the user typed when it differs from ``text`` (``/review``, @files): shown in lists and
    # replays, never sent, not part of the item's identity.
    typed: str | None = field(default=None, compare=False)


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
    images: tuple[Image, ...] = ()  # e.g. read_file on a picture, an MCP tool's screenshot


Item = Message | Reasoning | ToolCall | ToolOutput

_TYPES: dict[str, type] = {"message": Message, "reasoning": Reasoning, "tool_call": ToolCall, "tool_output": ToolOutput}
_NAMES = {cls: name for name, cls in _TYPES.items()}


def user(text: str) -> Message:
    return Message("user", text)


def assistant(text: str) -> Message:
    return Message("assistant", text)


def developer(text: str) -> Message:
    return Message("developer", text)


def item_to_dict(item: Item) -> dict[str, Any]:
    data: dict[str, Any] = {"type": _NAMES[type(item)]}
    for item_field in dataclasses.fields(item):
        value = getattr(item, item_field.name)
        if item_field.name == "images":
            if value:  # absent when empty, so items without images serialize as before
                data["images"] = [image_to_dict(image) for image in value]
        elif value is not None:
            data[item_field.name] = value
    return data


def image_to_dict(image: Image) -> dict[str, Any]:
    """The reference only: the bytes live in the image store, not in the session file."""
    data = {"sha256": image.sha256, "mime_type": image.mime_type, "width": image.width, "height": image.height}
    if image.name:
        data["name"] = image.name
    return data


def image_from_dict(data: Any) -> Image:
    if not isinstance(data, dict):
        raise ValueError(f"an image must be a JSON object, got {type(data).__name__}")
    sha256, mime_type = data.get("sha256"), data.get("mime_type")
    width, height, name = data.get("width"), data.get("height"), data.get("name", "")
    if not (isinstance(sha256, str) and isinstance(mime_type, str) and isinstance(name, str)):
        raise ValueError("an image needs string `sha256` and `mime_type`")
    if not (isinstance(width, int) and isinstance(height, int)):
        raise ValueError("an image needs integer `width` and `height`")
    return Image(sha256, mime_type, width, height, name)


def item_from_dict(data: object) -> Item:
    """Inverse of :func:`item_to_dict`. Raises ``ValueError`` on anything malformed."""
    if not isinstance(data, dict):
        raise ValueError(f"item must be a JSON object, got {type(data).__name__}")
    kind = data.get("type")
    cls = _TYPES.get(kind) if isinstance(kind, str) else None  # a list or an object would not even hash
    if cls is None:
        raise ValueError(f"unknown item type {kind!r}")
    names = {f.name for f in dataclasses.fields(cls)}
    fields = {k: v for k, v in data.items() if k in names}
    if "images" in fields:
        if not isinstance(fields["images"], list):
            raise ValueError(f"malformed {kind} item: `images` must be an array")
        fields["images"] = tuple(image_from_dict(entry) for entry in fields["images"])
    try:
        item = cls(**fields)
    except TypeError as exc:
        raise ValueError(f"malformed {kind} item: {exc}") from None
    if isinstance(item, Message) and item.role not in ("user", "assistant", "developer"):
        raise ValueError(f"unknown message role {item.role!r}")
    return item
