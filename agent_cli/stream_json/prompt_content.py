"""A ``user`` message's content (a string, or text and image blocks) as the command layer takes
it: the text, and image files that live until :meth:`PromptContent.cleanup`."""

from __future__ import annotations

import base64
import binascii
import tempfile
from pathlib import Path
from typing import Any

IMAGE_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


class PromptContent:
    def __init__(self, message: Any):
        self.parts: list[str] = []
        self.images: list[Path] = []
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        content = message.get("content") if isinstance(message, dict) else message
        if isinstance(content, str):
            self.parts.append(content)
        elif isinstance(content, list):
            for block in content:
                if isinstance(block, dict):
                    self._add(block)

    @property
    def text(self) -> str:
        return "\n".join(self.parts)

    def cleanup(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()

    def _add(self, block: dict[str, Any]) -> None:
        if block.get("type") == "text" and isinstance(block.get("text"), str):
            self.parts.append(block["text"])
        elif block.get("type") == "image" and isinstance(block.get("source"), dict):
            source = block["source"]
            suffix = IMAGE_SUFFIXES.get(str(source.get("media_type")))
            if source.get("type") != "base64" or suffix is None:
                return
            try:
                data = base64.b64decode(str(source.get("data", "")), validate=True)
            except (binascii.Error, ValueError):
                return
            if self._folder is None:
                self._folder = tempfile.TemporaryDirectory(prefix="agent-sdk-images-")
            path = Path(self._folder.name) / f"image-{len(self.images) + 1}{suffix}"
            path.write_bytes(data)
            self.images.append(path)
