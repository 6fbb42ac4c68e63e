"""What the model reads from an MCP tool result, a prompt's messages and a resource.

Text content is joined; ``structuredContent`` is shown as JSON when there is no text; images,
audio and binary resources become a one-line note (:func:`binary_note`); resource links are
listed; ``isError`` makes the call a failure. The text then goes through the same budget as
built-in tools: head + tail with a marker, the whole output in a spill file.
"""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable
from typing import Any

from agent_cli.context.truncate import truncate_text
from agent_cli.files.view import human_size
from agent_cli.paths import open_private
from agent_cli.tools.base import ToolContext
from agent_cli.tools.capture import new_spill_path
from agent_cli.tools.common import output_policy

EMPTY_RESULT = "(the tool returned no content)"


def decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data) * 3 // 4


def binary_note(kind: str, mime_type: str | None, data: str) -> str:
    """The one line that stands for an image, audio or binary content the model cannot take.

    Images in tool results go to the model as images when the caller passes ``show_image``
    (tools/image_result.py); this note is left for the ones it cannot decode.
    """
    return f"[{kind}: {mime_type or 'unknown type'}, {human_size(decoded_size(data))}; not shown to the model]"


ShowImage = Callable[[Any], "str | None"]  # an image block -> the line describing it, once it is attached


def content_text(block: Any, show_image: ShowImage | None = None) -> str:
    """One content block (text, image, audio, resource link or embedded resource) as text."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return block.text
    if kind == "image" and show_image is not None and (line := show_image(block)) is not None:
        return line
    if kind in ("image", "audio"):
        return binary_note(kind, block.mime_type, block.data)
    if kind == "resource_link":
        details = ", ".join(filter(None, [block.mime_type, block.description]))
        return f"[resource link: {block.name} <{block.uri}>{f' ({details})' if details else ''}]"
    if kind == "resource":
        return resource_contents_text(block.resource)
    return f"[{kind or type(block).__name__} content not shown]"


def resource_contents_text(contents: Any) -> str:
    """A resource's text, or a note for a binary one."""
    text = getattr(contents, "text", None)
    if text is not None:
        return text
    return binary_note("binary resource", contents.mime_type, getattr(contents, "blob", "") or "")


def result_text(result: Any, show_image: ShowImage | None = None) -> tuple[str, bool]:
    """``(text for the model, success)`` for a ``CallToolResult``."""
    parts = [content_text(block, show_image) for block in result.content or []]
    has_text = any(getattr(block, "type", None) == "text" for block in result.content or [])
    structured = getattr(result, "structured_content", None)
    if structured is not None and not has_text:
        parts.append(json.dumps(structured, ensure_ascii=False, indent=1))
    text = "\n".join(part for part in parts if part) or EMPTY_RESULT
    return text, not result.is_error


def budgeted(text: str, ctx: ToolContext) -> str:
    """``text`` within the tool output budget; over it, head + tail and the whole text saved to a file."""
    policy = output_policy(ctx)
    if policy.fits(text):
        return text
    path = new_spill_path(ctx.data_dir, ctx.call_id)
    try:
        with open_private(path, "w") as handle:
            handle.write(text)
        note = f"Full output ({len(text.encode('utf-8'))} bytes) saved to {path}; page it with read_file offset/limit\n"
    except OSError as exc:
        note = f"Full output could not be saved: {exc}\n"
    return note + truncate_text(text, policy)
