"""Files as an editor holds them: a front end whose client has the files open (ACP's fs
capability) lets `read_file` see unsaved buffers and `apply_patch` edit in the editor's buffers.
Without one, tools read and write the disk."""

from __future__ import annotations

from pathlib import Path
from typing import Protocol


class EditorFiles(Protocol):
    async def read_text(self, path: Path) -> str | None:
        """The text the editor has for ``path`` (its buffer, saved or not); None: read the disk."""
        ...

    async def write_text(self, path: Path, text: str) -> bool:
        """Write ``text`` to ``path`` through the editor; False: it could not, write the disk."""
        ...
