"""What every wire format needs from an image: its base64 data, or the text that replaces it."""

from __future__ import annotations

import base64

from agent_cli.items import Image


def base64_data(image: Image) -> str | None:
    """The image's bytes as base64; None when they are gone (a resumed session lost the file)."""
    return base64.b64encode(image.data).decode("ascii") if image.data is not None else None


def data_url(image: Image) -> str | None:
    encoded = base64_data(image)
    return f"data:{image.mime_type};base64,{encoded}" if encoded is not None else None


def missing_note(image: Image) -> str:
    return f"{image.placeholder} (the image file is no longer available)"


def tool_images_note(call_id: str) -> str:
    """Leads the user message that carries a tool's images on wires whose tool results are text only."""
    return f"Images returned by tool call {call_id}:"
