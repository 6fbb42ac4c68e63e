"""The editor's buffers through ACP's fs capability (`fs/read_text_file`, `fs/write_text_file`):
what read_file and apply_patch use when the client offers it, so unsaved edits are seen and
changes land in the open buffers. A client that fails a call falls back to the disk."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

log = logging.getLogger("agent_cli.acp")


class ClientFiles:
    def __init__(self, conn: Any, session_id: str, can_read: bool, can_write: bool):
        self.conn, self.session_id = conn, session_id
        self.can_read, self.can_write = can_read, can_write

    async def read_text(self, path: Path) -> str | None:
        if not self.can_read:
            return None
        try:
            return (await self.conn.read_text_file(session_id=self.session_id, path=str(path))).content
        except Exception as exc:  # the client could not: read the disk instead
            log.warning("fs/read_text_file %s failed: %s", path, exc)
            return None

    async def write_text(self, path: Path, text: str) -> bool:
        if not self.can_write:
            return False
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=text)
            return True
        except Exception as exc:
            log.warning("fs/write_text_file %s failed: %s", path, exc)
            return False
