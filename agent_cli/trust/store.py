"""The user's answers to "trust this folder?", per folder and content hash, in
``$AGENT_HOME/trusted_folders.json``. A changed hash is a new question."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

STORE_FILE = "trusted_folders.json"


class TrustStore:
    def __init__(self, agent_home: Path):
        self.path = Path(agent_home) / STORE_FILE

    def _read(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) else {}

    def answer(self, folder: Path, digest: str) -> bool | None:
        """True or False as the user answered for this content; None: never asked about it."""
        entry = self._read().get(str(folder))
        if not isinstance(entry, dict) or entry.get("hash") != digest:
            return None
        return bool(entry.get("trusted"))

    def record(self, folder: Path, digest: str, trusted: bool) -> None:
        data = self._read()
        data[str(folder)] = {"hash": digest, "trusted": trusted, "at": int(time.time())}
        self.path.parent.mkdir(parents=True, exist_ok=True)
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        temporary.write_text(json.dumps(data, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        os.replace(temporary, self.path)  # another agent reading it never sees half a file
