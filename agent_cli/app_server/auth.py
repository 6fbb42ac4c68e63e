"""Who may open a WebSocket: the capability token (Codex's ``--ws-auth capability-token``), sent as
``Authorization: Bearer TOKEN`` on the HTTP handshake and checked before anything else is read.

Only the token's SHA-256 is kept, and a presented token is compared by its digest in constant
time (``hmac.compare_digest``), so neither its length nor its first differing byte shows in how
long a refusal takes."""

from __future__ import annotations

import hashlib
import hmac
import re
import stat
from dataclasses import dataclass
from pathlib import Path

HEX_DIGEST = re.compile(r"[0-9a-fA-F]{64}\Z")
MAX_TOKEN_FILE = 4096


class AuthSetupError(Exception):
    """The token cannot be read as given; the message says why."""


@dataclass(frozen=True, slots=True)
class TokenCheck:
    digest: bytes  # SHA-256 of the token

    @classmethod
    def from_file(cls, path: Path) -> TokenCheck:
        """The token in ``path`` (its first line, surrounding whitespace dropped). A file others
        can read is refused: anyone who reads it drives the sessions."""
        if not path.is_absolute():
            raise AuthSetupError(f"--ws-token-file must be an absolute path: {path}")
        try:
            info = path.stat()
            if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise AuthSetupError(f"{path} can be read by other users: chmod 600 it first")
            with path.open("rb") as handle:
                raw = handle.read(MAX_TOKEN_FILE + 1)
        except OSError as exc:
            raise AuthSetupError(f"cannot read the token file {path}: {exc.strerror or exc}") from None
        if len(raw) > MAX_TOKEN_FILE:
            raise AuthSetupError(f"{path} is too long for a token ({MAX_TOKEN_FILE} bytes at most)")
        token = raw.decode("utf-8", "replace").strip().splitlines()[0].strip() if raw.strip() else ""
        if not token:
            raise AuthSetupError(f"the token file {path} is empty")
        return cls(hashlib.sha256(token.encode()).digest())

    @classmethod
    def from_sha256(cls, hex_digest: str) -> TokenCheck:
        if not HEX_DIGEST.match(hex_digest.strip()):
            raise AuthSetupError("--ws-token-sha256 takes the token's SHA-256 as 64 hexadecimal digits")
        return cls(bytes.fromhex(hex_digest.strip()))

    def accepts(self, authorization: str | None) -> bool:
        """Whether an ``Authorization`` header carries the token (``Bearer TOKEN``)."""
        scheme, _, token = (authorization or "").strip().partition(" ")
        presented = hashlib.sha256(token.strip().encode()).digest()
        matches = hmac.compare_digest(presented, self.digest)  # always compared, whatever the scheme
        return matches and scheme.lower() == "bearer" and bool(token.strip())
