"""An ACP prompt (text, images, resource links, embedded resources) as what our command layer
takes: the text, with the client's files attached as `@path` would attach them, and image files."""

from __future__ import annotations

import base64
import binascii
import re
import tempfile
from pathlib import Path
from urllib.parse import unquote, urlparse
from xml.sax.saxutils import quoteattr

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
)

EMBEDDED_TEXT_LIMIT = 256 * 1024  # characters of one open file or selection the client embeds
IMAGE_SUFFIXES = {"image/png": ".png", "image/jpeg": ".jpg", "image/gif": ".gif", "image/webp": ".webp"}


class PromptInput:
    """The text and image files of one prompt; the image files live until :meth:`cleanup`."""

    def __init__(self, blocks: list, cwd: Path):
        self.parts: list[str] = []
        self.attached: list[str] = []
        self.images: list[Path] = []
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        for block in blocks:
            self._add(block, cwd)

    @property
    def text(self) -> str:
        return "\n".join([*self.parts, *self.attached]).strip()

    def cleanup(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()

    def _add(self, block, cwd: Path) -> None:
        if isinstance(block, TextContentBlock):
            self.parts.append(block.text)
        elif isinstance(block, ImageContentBlock):
            self._add_image(block)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, BlobResourceContents):
                self.attached.append(
                    f"<attached_file path={quoteattr(display_path(resource.uri, cwd))}>\n"
                    f"(binary content from the editor; not shown)\n</attached_file>"
                )
            else:
                text = resource.text
                cut = len(text) > EMBEDDED_TEXT_LIMIT
                body = text[:EMBEDDED_TEXT_LIMIT] + ("\n[… cut: the rest was not attached …]" if cut else "")
                self.attached.append(
                    f"<attached_file path={quoteattr(display_path(resource.uri, cwd))} "
                    f'source="editor">\n{body}\n</attached_file>'
                )
        elif isinstance(block, ResourceContentBlock):
            path = file_path(block.uri)
            # A file link is attached as `@path` is (the same processors and limits); anything else stays a link.
            self.parts.append(mention(relative(path, cwd)) if path is not None else f"<{block.uri}>")

    def _add_image(self, block: ImageContentBlock) -> None:
        try:
            data = base64.b64decode(block.data, validate=True)
        except (binascii.Error, ValueError):
            self.parts.append("(an image from the editor could not be decoded)")
            return
        if self._folder is None:
            self._folder = tempfile.TemporaryDirectory(prefix="agent-acp-")
        path = Path(self._folder.name) / f"image-{len(self.images)}{IMAGE_SUFFIXES.get(block.mime_type, '.png')}"
        path.write_bytes(data)
        self.images.append(path)


BARE_MENTION = re.compile(r"[^\s\"'`<>()\[\]{},;|]+")  # what `@path` takes unquoted (commands/expand.py)


def mention(path: str) -> str:
    """``@path``, quoted (``@"my file.txt"``) when a bare mention would stop short: a name with a
    space was left as plain text and the file never attached."""
    if BARE_MENTION.fullmatch(path) and not path.endswith(tuple(".,:;!?")):
        return f"@{path}"
    return f'@"{path}"'


def file_path(uri: str) -> Path | None:
    parsed = urlparse(uri)
    if parsed.scheme == "file":
        return Path(unquote(parsed.path))
    if not parsed.scheme and uri.startswith("/"):
        return Path(uri)
    return None


def relative(path: Path, cwd: Path) -> str:
    try:
        return str(path.resolve().relative_to(cwd.resolve()))
    except ValueError:
        return str(path)


def display_path(uri: str, cwd: Path) -> str:
    path = file_path(uri)
    return relative(path, cwd) if path is not None else uri
