"""Images in the history when they cannot or should no longer be sent: one-line stand-ins.

A model without vision reads a note in place of each image; after a compaction, images older
than the kept messages become a ``[image: name, W x H]`` placeholder and are never sent again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace

from agent_cli.items import Image, Item, Message, ToolOutput

OLD_IMAGES_HEADING = "Images from the earlier conversation (not shown again):"


def images_of(item: Item) -> tuple[Image, ...]:
    return item.images if isinstance(item, (Message, ToolOutput)) else ()


def no_vision_note(image: Image, model: str) -> str:
    return f"{image.placeholder} (not shown: {model} cannot see images)"


def no_vision_warning(model: str) -> str:
    return (
        f"{model} cannot see images, so it gets a one-line note in place of each image. "
        "If it can, set `model_supports_images = true`."
    )


def without_images(items: Iterable[Item], model: str) -> tuple[list[Item], int]:
    """``items`` with each image replaced by a note in its text; returns how many were replaced."""
    out: list[Item] = []
    replaced = 0
    for item in items:
        images = images_of(item)
        if images:
            replaced += len(images)
            if isinstance(item, Message):
                item = replace(item, text=_with_notes(item.text, images, model), images=())
            else:
                item = replace(item, output=_with_notes(item.output, images, model), images=())  # type: ignore[arg-type]
        out.append(item)
    return out, replaced


def _with_notes(text: str, images: tuple[Image, ...], model: str) -> str:
    notes = []
    for image in images:
        if image.placeholder[:-1] in text:  # already described (a tool's output): say only why it is missing
            notes.append(f"({image.name or 'the image'} is not shown: {model} cannot see images)")
        else:
            notes.append(no_vision_note(image, model))
    return "\n".join([text, *notes] if text else notes)


def old_image_placeholders(dropped: Iterable[Item]) -> str:
    """The placeholder lines for the images of items a compaction drops ("" when none)."""
    lines = [image.placeholder for item in dropped for image in images_of(item)]
    return f"{OLD_IMAGES_HEADING}\n" + "\n".join(lines) if lines else ""
