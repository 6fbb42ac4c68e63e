"""Images for the model: sized for every provider, stored once, restored on resume.

Every provider takes PNG, JPEG, GIF and WebP up to a size; we keep images within the strictest
published limits (long side at most 2,048 px, at most 5 MB once base64-encoded, as Anthropic
counts it) so one prepared image works for all of them. Pillow is imported only when an image
is actually attached.

Prepared images are stored once, content-addressed, under ``$AGENT_HOME/images/<sha256>.<ext>``;
items and session files carry only the reference (:class:`agent_cli.items.Image`).
"""

from __future__ import annotations

import hashlib
import io
import os
import tempfile
import warnings
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from agent_cli.files.detect import IMAGE, detect
from agent_cli.items import Image, Item, Message, ToolOutput

MAX_SIDE = 2048
MAX_BASE64_BYTES = 5 * 1024 * 1024
MAX_INPUT_BYTES = 50 * 1024 * 1024  # what we are willing to decode at all
MAX_PIXELS = 60_000_000  # more would take gigabytes to decode (a "decompression bomb")
JPEG_QUALITIES = (90, 80, 70, 60)
# Formats every provider accepts as they are; anything else Pillow reads is re-encoded as PNG.
SENDABLE = {"PNG": "image/png", "JPEG": "image/jpeg", "GIF": "image/gif", "WEBP": "image/webp"}
EXTENSIONS = {"image/png": "png", "image/jpeg": "jpg", "image/gif": "gif", "image/webp": "webp"}
# File names that read_file, @path and pasted paths treat as images.
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".tif", ".tiff"})


class ImageError(ValueError):
    """An image we cannot use. The message is meant for whoever supplied it."""


@dataclass(frozen=True, slots=True)
class PreparedImage:
    data: bytes
    mime_type: str
    width: int
    height: int
    original_size: tuple[int, int]  # before resizing, for the note the model reads

    @property
    def resized(self) -> bool:
        return self.original_size != (self.width, self.height)


def looks_like_image(path: Path, head: bytes) -> bool:
    """True when a file's name or first bytes say it is an image (files/detect.py decides, so a
    text file that merely starts with "BM" stays text)."""
    return detect(path, head).kind == IMAGE


def is_image_file(path: Path) -> bool:
    """True for an existing file whose name or first bytes say it is an image."""
    if not path.is_file():
        return False
    try:
        with path.open("rb") as handle:
            return looks_like_image(path, handle.read(16))
    except OSError:
        return False


def base64_length(size: int) -> int:
    return 4 * ((size + 2) // 3)


def prepare_image(data: bytes) -> PreparedImage:
    """Decode ``data`` and return it within the providers' limits, re-encoded only when needed.

    Raises :class:`ImageError` for data Pillow cannot read (or an absurdly large picture).
    """
    if len(data) > MAX_INPUT_BYTES:
        raise ImageError(f"the image is {len(data):,} bytes; at most {MAX_INPUT_BYTES:,} are accepted")
    from PIL import Image as PILImage  # lazily: only sessions that attach images pay for Pillow

    picture = _decode(data)
    original = picture.size
    mime = SENDABLE.get(picture.format or "")
    too_big = max(original) > MAX_SIDE
    if mime is not None and not too_big and base64_length(len(data)) <= MAX_BASE64_BYTES:
        return PreparedImage(data, mime, *original, original_size=original)
    picture = _editable(picture)
    encoded = b""
    if too_big:
        picture.thumbnail((MAX_SIDE, MAX_SIDE), PILImage.Resampling.LANCZOS)
    if too_big or mime is None:  # resized, or a format providers refuse: JPEG stays JPEG, the rest is PNG
        mime = "image/jpeg" if mime == "image/jpeg" else "image/png"
        encoded = _encode(picture, "JPEG" if mime == "image/jpeg" else "PNG")
    if not encoded or base64_length(len(encoded)) > MAX_BASE64_BYTES:  # still too heavy: JPEG
        encoded, picture = _shrink_to_limit(picture)
        mime = "image/jpeg"
    return PreparedImage(encoded, mime, *picture.size, original_size=original)


def _decode(data: bytes):
    from PIL import Image as PILImage

    errors = (OSError, SyntaxError, ValueError, PILImage.DecompressionBombError)
    try:
        with warnings.catch_warnings():  # MAX_PIXELS below is the stricter check; never print
            warnings.simplefilter("ignore", PILImage.DecompressionBombWarning)
            picture = PILImage.open(io.BytesIO(data))  # reads the header only
    except PILImage.UnidentifiedImageError:  # its message names the BytesIO object, useless to a reader
        raise ImageError("not a readable image (Pillow does not recognize its format)") from None
    except errors as exc:
        raise ImageError(f"not a readable image ({exc})") from None
    if picture.width * picture.height > MAX_PIXELS:
        raise ImageError(f"the image is {picture.width} x {picture.height} pixels; at most {MAX_PIXELS:,} are accepted")
    try:
        picture.load()
    except errors as exc:
        raise ImageError(f"not a readable image ({exc})") from None
    return picture


def _editable(picture):
    """A still copy to re-encode: an animation's first frame, turned upright as its EXIF says
    (re-encoding drops the orientation tag that viewers would otherwise apply)."""
    from PIL import ImageOps

    if getattr(picture, "n_frames", 1) > 1:
        picture.seek(0)
    return ImageOps.exif_transpose(picture.copy())


def _encode(picture, fmt: str, quality: int = JPEG_QUALITIES[0]) -> bytes:
    out = io.BytesIO()
    if fmt == "JPEG":
        _flattened(picture).save(out, "JPEG", quality=quality)
    else:
        if picture.mode not in ("1", "L", "LA", "P", "RGB", "RGBA", "I;16"):
            picture = picture.convert("RGBA")
        picture.save(out, "PNG")
    return out.getvalue()


def _flattened(picture):
    """RGB for JPEG: transparency goes onto white, as a viewer would show it."""
    from PIL import Image as PILImage

    if picture.mode in ("RGBA", "LA", "P"):
        rgba = picture.convert("RGBA")
        background = PILImage.new("RGB", rgba.size, "white")
        background.paste(rgba, mask=rgba.getchannel("A"))
        return background
    return picture.convert("RGB") if picture.mode != "RGB" else picture


def _shrink_to_limit(picture):
    """JPEG at falling quality, then smaller, until the base64 form fits the limit."""
    while True:
        for quality in JPEG_QUALITIES:
            encoded = _encode(picture, "JPEG", quality)
            if base64_length(len(encoded)) <= MAX_BASE64_BYTES:
                return encoded, picture
        width, height = picture.size
        picture = picture.resize((max(1, width * 3 // 4), max(1, height * 3 // 4)))


# --- the store ------------------------------------------------------------------------------------


def images_dir(agent_home: Path) -> Path:
    return Path(agent_home) / "images"


def stored_path(agent_home: Path, image: Image) -> Path:
    return images_dir(agent_home) / f"{image.sha256}.{EXTENSIONS.get(image.mime_type, 'bin')}"


def store_image(prepared: PreparedImage, agent_home: Path, name: str) -> Image:
    """Keep ``prepared`` under its content hash (once) and return the item that refers to it."""
    sha256 = hashlib.sha256(prepared.data).hexdigest()
    image = Image(sha256, prepared.mime_type, prepared.width, prepared.height, name, data=prepared.data)
    path = stored_path(agent_home, image)
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        # Written aside and renamed, so a crash never leaves a half image under the final name.
        fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as handle:
                handle.write(prepared.data)
            os.replace(temporary, path)
        except BaseException:
            Path(temporary).unlink(missing_ok=True)
            raise
    return image


def load_image(data: bytes, agent_home: Path, name: str) -> Image:
    """Prepare and store an image from its bytes (raises :class:`ImageError`)."""
    return store_image(prepare_image(data), agent_home, name)


def load_image_file(path: Path, agent_home: Path, name: str | None = None) -> Image:
    """Prepare and store the image at ``path`` (raises :class:`ImageError` or ``OSError``)."""
    size = path.stat().st_size
    if size > MAX_INPUT_BYTES:
        raise ImageError(f"{path.name} is {size:,} bytes; at most {MAX_INPUT_BYTES:,} are accepted")
    return load_image(path.read_bytes(), agent_home, name or path.name)


def describe(image: Image, original_size: tuple[int, int] | None = None) -> str:
    """One line for the model next to the image: its name, size, and any resizing."""
    resized = ""
    if original_size and original_size != (image.width, image.height):
        resized = f", resized from {original_size[0]} x {original_size[1]}"
    return f"[image: {image.name or 'image'}, {image.width} x {image.height}{resized}]"


# --- resume ---------------------------------------------------------------------------------------


def restore_images(items: Iterable[Item], agent_home: Path) -> tuple[list[Item], list[str]]:
    """Items from a session file with their image bytes read back from the store.

    An image whose stored file is gone stays a reference without data (the model gets its
    placeholder); one warning names how many were missing.
    """
    restored: list[Item] = []
    missing: list[str] = []
    for item in items:
        if isinstance(item, (Message, ToolOutput)) and item.images:
            images = tuple(_with_data(image, agent_home, missing) for image in item.images)
            item = replace(item, images=images)
        restored.append(item)
    warnings = []
    if missing:
        warnings.append(
            f"{len(missing)} image(s) of this session are no longer in {images_dir(agent_home)} "
            f"({', '.join(missing[:3])}{'…' if len(missing) > 3 else ''}); the model sees placeholders instead"
        )
    return restored, warnings


def _with_data(image: Image, agent_home: Path, missing: list[str]) -> Image:
    if image.data is not None:
        return image
    try:
        data = stored_path(agent_home, image).read_bytes()
    except OSError:
        missing.append(image.name or image.sha256[:12])
        return image
    if hashlib.sha256(data).hexdigest() != image.sha256:  # a damaged file must not be sent
        missing.append(image.name or image.sha256[:12])
        return image
    return replace(image, data=data)
