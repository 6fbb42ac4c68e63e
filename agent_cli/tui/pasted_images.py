"""Pasted text that names image files: what a terminal pastes when a picture is dropped onto it.

Terminals paste a dropped file as its path, quoted (``'/a b.png'``), backslash-escaped
(``/a\\ b.png``) or as a ``file://`` URL; several files come separated by spaces.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from urllib.parse import unquote, urlparse

from agent_cli.files.images import IMAGE_SUFFIXES

MAX_PASTED_PATH_CHARS = 4096  # longer pastes are text, never a list of paths


class PromptWithImages(str):
    """Typed text with the image files attached to it: queued and sent as one."""

    images: tuple[Path, ...]

    def __new__(cls, text: str, images: tuple[Path, ...]) -> PromptWithImages:
        prompt = super().__new__(cls, text)
        prompt.images = tuple(images)
        return prompt


def pasted_image_paths(text: str, cwd: Path) -> list[Path]:
    """The image files ``text`` names, when it names nothing else; [] for ordinary text."""
    text = text.strip()
    if not text or len(text) > MAX_PASTED_PATH_CHARS or "\n" in text:
        return []
    try:
        words = shlex.split(text)
    except ValueError:  # an unbalanced quote: ordinary text
        return []
    paths = []
    for word in words:
        if word.startswith("file://"):
            word = unquote(urlparse(word).path)
        path = (cwd / Path(word).expanduser()).resolve()
        if path.suffix.lower() not in IMAGE_SUFFIXES or not path.is_file():
            return []
        paths.append(path)
    return paths
