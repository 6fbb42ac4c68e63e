"""Where MCP logins live: one 0600 JSON file per server URL under ``$AGENT_HOME/mcp-auth/``.

A file holds the server's URL, the OAuth tokens, when the access token expires, and the client
registration the authorization server gave us. It is never written into a repository, a session
file or a log; ``agent mcp logout`` deletes it. Plain dicts here (the SDK's models are built in
:mod:`agent_cli.mcp.oauth`), so ``/mcp`` can show a server's login state without loading the SDK.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Literal

AUTH_DIR = "mcp-auth"
LoginState = Literal["needs login", "logged in", "expired"]


def auth_dir(home: Path) -> Path:
    return home / AUTH_DIR


class TokenFile:
    """The stored login of one server URL."""

    def __init__(self, home: Path, server_url: str):
        self.server_url = server_url
        digest = hashlib.sha256(server_url.encode()).hexdigest()[:32]
        self.path = auth_dir(home) / f"{digest}.json"

    def read(self) -> dict[str, Any]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        return data if isinstance(data, dict) and data.get("server_url") == self.server_url else {}

    def write(self, data: dict[str, Any]) -> None:
        """Atomically, readable only by the user (the directory 0700, the file 0600)."""
        folder = self.path.parent
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        with contextlib.suppress(OSError):
            folder.chmod(0o700)
        temporary = self.path.with_suffix(f".{os.getpid()}.tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
            json.dump({**data, "server_url": self.server_url}, handle, indent=1)
        os.replace(temporary, self.path)

    def update(self, **changes: Any) -> None:
        data = self.read()
        for key, value in changes.items():
            if value is None:
                data.pop(key, None)
            else:
                data[key] = value
        self.write(data)

    def tokens(self) -> dict[str, Any] | None:
        return self.read().get("tokens")

    def set_tokens(self, tokens: dict[str, Any]) -> None:
        expires_in = tokens.get("expires_in")
        expires_at = time.time() + float(expires_in) if expires_in is not None else None
        self.update(tokens=tokens, expires_at=expires_at)

    def clear_tokens(self) -> None:
        """Forget the tokens (revoked, or a new login); keep the client registration."""
        if self.path.exists():
            self.update(tokens=None, expires_at=None)

    def remove(self) -> bool:
        """``logout``: tokens and registration gone. False when there was no login."""
        try:
            self.path.unlink()
        except FileNotFoundError:
            return False
        return True

    def expires_at(self) -> float | None:
        value = self.read().get("expires_at")
        return float(value) if isinstance(value, (int, float)) else None

    def state(self) -> LoginState:
        """What ``/mcp`` shows: a token that expired but can be refreshed counts as logged in."""
        data = self.read()
        tokens = data.get("tokens") or {}
        if not tokens.get("access_token"):
            return "needs login"
        expires = data.get("expires_at")
        if isinstance(expires, (int, float)) and expires < time.time() and not tokens.get("refresh_token"):
            return "expired"
        return "logged in"
