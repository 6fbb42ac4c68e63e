"""Tool outputs that carry an image: one path for read_file, MCP tool results and any other tool.

The image is prepared for the providers (agent_cli/files/images.py), stored once under
``$AGENT_HOME/images`` and put in :attr:`ToolResult.images`; each model client then sends it in
its own wire format (or a note, for a model without vision).
"""

from __future__ import annotations

from pathlib import Path

from agent_cli.files.detect import image_mime_type
from agent_cli.files.images import MAX_INPUT_BYTES, ImageError, describe, prepare_image, store_image
from agent_cli.items import Image
from agent_cli.tools.base import ToolContext, ToolError, ToolResult


def tool_image(data: bytes, mime_type: str, ctx: ToolContext, *, name: str) -> tuple[Image, str]:
    """The stored image for ``data`` and the one-line description the model reads beside it.

    ``mime_type`` is what the source declared; the bytes decide. Raises :class:`ToolError`
    when they are not a readable image.
    """
    try:
        prepared = prepare_image(data)
    except ImageError as exc:
        raise ToolError(f"{name} ({mime_type}): {exc}") from None
    try:
        image = store_image(prepared, ctx.data_dir, name)
    except OSError as exc:
        raise ToolError(f"cannot store {name} in {ctx.data_dir}: {exc.strerror or exc}") from None
    return image, describe(image, prepared.original_size)


def image_tool_result(data: bytes, mime_type: str, ctx: ToolContext, *, name: str, text: str = "") -> ToolResult:
    """A tool result showing one image (with ``text`` before its description).

    For several images in one result (an MCP tool's), call :func:`tool_image` for each and
    build ``ToolResult(text, images=(...))``.
    """
    image, line = tool_image(data, mime_type, ctx, name=name)
    output = f"{text.rstrip()}\n{line}" if text.strip() else line
    return ToolResult(output, images=(image,))


def read_image_file(path: Path, ctx: ToolContext) -> ToolResult:
    """``read_file`` on a picture: the image itself, sized for the model (blocking: run in a thread)."""
    try:
        size = path.stat().st_size
        if size > MAX_INPUT_BYTES:
            raise ToolError(f"{path.name} is an image of {size:,} bytes; at most {MAX_INPUT_BYTES:,} can be shown")
        data = path.read_bytes()
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror or exc}") from None
    return image_tool_result(data, image_mime_type(data[:16]) or "image", ctx, name=path.name)
