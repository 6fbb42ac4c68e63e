"""What the launcher and the warm server share: where the socket lives, what identifies an
install, and the framing of their messages. Light on imports: the launcher loads it before
anything else."""

from __future__ import annotations

import hashlib
import json
import os
import resource
import socket
import struct
import sys
from collections.abc import Sequence
from pathlib import Path

import agent_cli
from agent_cli.paths import warm_server_dir

PACKAGE_DIR = Path(agent_cli.__file__).resolve().parent
HEADER = struct.Struct("!I")
MAX_REQUEST = 4 << 20  # argv and environment: far above any real one
STREAMS = 4  # stdin, stdout, stderr and the working folder, as descriptors
GO = b"\x01"  # the child starts only once the launcher has its pid: never a warm run and a cold one
NO_DAEMON_ENV = "AGENT_NO_DAEMON"
IDLE_ENV = "AGENT_DAEMON_IDLE_SECONDS"
DEFAULT_IDLE_SECONDS = 15 * 60
# Read by the SDKs when they are imported, so a warm process could not honour a change.
# The interpreter's own settings: part of the fingerprint, and given to the server it starts.
INTERPRETER_ENV = (
    "LANG",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "PYTHONPATH",
    "PYTHONHOME",
    "PYTHONUTF8",
    "PYTHONSAFEPATH",
    "PYTHONNOUSERSITE",
    "PYTHONUSERBASE",
    "PYTHONHASHSEED",
    "PYTHONDONTWRITEBYTECODE",
    "PYTHONPYCACHEPREFIX",
)
# Resource limits a run inherits from its caller (`ulimit`): the child takes the launcher's.
LIMITS = ("RLIMIT_CPU", "RLIMIT_FSIZE", "RLIMIT_DATA", "RLIMIT_STACK", "RLIMIT_CORE", "RLIMIT_NOFILE", "RLIMIT_AS")
READ_AT_IMPORT = ("OPENAI_LOG", "ANTHROPIC_LOG", "PYTHONWARNINGS", "PYTHONDEVMODE", "PYTHONASYNCIODEBUG")


def socket_dir() -> Path:
    """Out of every sandbox's reach: not in a temp folder, and masked in every sandbox (paths.py)."""
    return warm_server_dir()


def socket_path() -> Path:
    """One server per Python and install location (venvs side by side each get their own)."""
    key = hashlib.sha256(f"{sys.executable}\0{PACKAGE_DIR}".encode()).hexdigest()[:16]
    return socket_dir() / f"warm-{key}.sock"


def install_fingerprint() -> str:
    """The version, the interpreter, and every module file of the program with its size and
    modification time, plus the site-packages folders (an SDK upgraded or removed): a server
    started from other code refuses to run this launcher's request."""
    digest = hashlib.sha256(f"{agent_cli.__version__}\0{sys.executable}\0{sys.version}".encode())
    for name in INTERPRETER_ENV:
        digest.update(f"{name}={os.environ.get(name)}\0".encode())
    for root, dirs, files in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                info = os.stat(os.path.join(root, name))
                digest.update(f"{root}/{name}\0{info.st_size}\0{info.st_mtime_ns}\0".encode())
    for entry in sys.path:
        if entry.endswith("site-packages"):
            try:
                digest.update(f"{entry}\0{os.stat(entry).st_mtime_ns}\0".encode())
            except OSError:
                continue
    return digest.hexdigest()


def limits() -> dict[str, list[int]]:
    return {name: list(resource.getrlimit(getattr(resource, name))) for name in LIMITS if hasattr(resource, name)}


def send_message(sock: socket.socket, message: dict, fds: Sequence[int] = ()) -> None:
    data = json.dumps(message).encode()
    framed = HEADER.pack(len(data)) + data
    if fds:
        sent = socket.send_fds(sock, [framed], list(fds))
        framed = framed[sent:]
    sock.sendall(framed)


class Messages:
    """Length-prefixed JSON messages read off a stream socket (several may come in one read)."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.buffer = b""

    def next(self, max_fds: int = 0) -> tuple[dict | None, list[int]]:
        """The next message and the descriptors that came with it; (None, []) once the other end
        closed. ``max_fds``: descriptors may come with the message's first bytes."""
        fds: list[int] = []
        while True:
            if len(self.buffer) >= HEADER.size:
                (size,) = HEADER.unpack_from(self.buffer)
                if size > MAX_REQUEST:
                    raise ValueError("message too large")
                if len(self.buffer) >= HEADER.size + size:
                    data = self.buffer[HEADER.size : HEADER.size + size]
                    self.buffer = self.buffer[HEADER.size + size :]
                    return json.loads(data), fds
            if max_fds and not fds:
                data, fds, _flags, _address = socket.recv_fds(self.sock, 65536, max_fds)
            else:
                data = self.sock.recv(65536)
            if not data:
                for fd in fds:
                    os.close(fd)
                return None, []
            self.buffer += data
