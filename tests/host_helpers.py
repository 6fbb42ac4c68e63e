"""Helpers for tests of the per-user host (agent_cli/remote/host.py): an environment with a
runtime folder of the test's own (so the host is the test's), the host's socket and its pid as the
kernel names it (``SO_PEERCRED``), and a fixture that ends a host a test left running."""

from __future__ import annotations

import os
import signal
import socket
import struct
from pathlib import Path

from tests.conftest import provider_env
from tests.fake_server import FakeModelServer
from tests.processes import alive
from tests.waiting import wait_for

IDLE_EXIT = "3"  # seconds: the host ends soon after its last session, in a test


def host_env(server: FakeModelServer, folder: Path, **extra: str) -> dict[str, str]:
    """What `agent` runs with in these tests: the fake model, and a runtime folder of the test's
    own (the host's socket is in it: each test has its own host)."""
    runtime = folder / "run"
    runtime.mkdir(mode=0o700, exist_ok=True)
    return {
        **provider_env(server, "openai-chat"),
        "XDG_RUNTIME_DIR": str(runtime),
        "AGENT_HOST_IDLE_EXIT": IDLE_EXIT,
        **extra,
    }


def host_socket(env: dict[str, str]) -> Path:
    return Path(env["XDG_RUNTIME_DIR"]) / f"agent-cli-{os.getuid()}" / "app-server.sock"


def host_pid(env: dict[str, str]) -> int | None:
    """The pid of the process listening on the host's socket (None: nothing listens)."""
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.connect(str(host_socket(env)))
        pid, _uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        return pid
    except OSError:
        return None
    finally:
        sock.close()


def end_host(env: dict[str, str]) -> None:
    """A host a test left running is stopped (SIGTERM: its sessions are saved, their processes end)."""
    if (pid := host_pid(env)) is not None:
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not alive(pid), 30, "the host to end")
