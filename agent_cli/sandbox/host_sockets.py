"""Filesystem Unix sockets on the host that a sandboxed command must not reach.

A socket of the host's (``/run/docker.sock`` would make a command root on the host, a D-Bus or
an ssh-agent socket the user, the user's tmux server in ``/tmp`` runs any command it is sent
outside the sandbox) is reachable wherever it lies, read-only or not: neither Landlock (up to
ABI 7) nor seccomp can refuse ``connect()`` by path. The sandbox covers each one with
``/dev/null`` instead. The list comes from ``/proc/net/unix`` (every bound socket of this network
namespace), read when each command starts: a socket bound later is not covered, and one gone
before the mount needs no cover (mounts.hide skips it, bwrap_retry.py runs bubblewrap again).
policy._hidden leaves the project's own sockets alone (an earlier command's server in the
workspace); the agent's own folders are masked as a whole wherever they lie (hidden.py), not by
this list.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from pathlib import Path

PROC_NET_UNIX = "/proc/net/unix"
FRESH_MOUNTS = ("/dev/", "/proc/")  # the sandbox mounts its own /dev and /proc


def host_sockets(allowed_roots: Iterable[Path], table: str = PROC_NET_UNIX) -> list[str]:
    """Bound filesystem sockets that exist now and lie outside ``allowed_roots`` (masked folders)."""
    roots = [str(root).rstrip("/") + "/" for root in allowed_roots]
    try:
        with open(table, encoding="utf-8", errors="surrogateescape") as f:
            lines = f.read().splitlines()[1:]
    except OSError:
        return []
    found: dict[str, None] = {}
    for line in lines:
        fields = line.split(None, 7)
        if len(fields) < 8 or not fields[7].startswith("/"):
            continue  # unnamed, or abstract ("@name"): Landlock scoping / the network namespace
        path = fields[7]
        if path in found or path.startswith(FRESH_MOUNTS) or any(path.startswith(root) for root in roots):
            continue
        try:
            if stat.S_ISSOCK(os.lstat(path).st_mode):
                found[path] = None
        except OSError:
            continue
    return list(found)
