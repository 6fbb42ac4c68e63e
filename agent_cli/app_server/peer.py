"""Who is at the other end of a Unix socket: only the user's own processes, and none of them
confined more than this server is (a command one of our sessions runs in its sandbox has the same
uid, so ``SO_PEERCRED`` alone cannot tell it from the user's terminal).

Both sandbox mechanisms leave marks a peer cannot take off: bubblewrap puts it in a mount and user
namespace of its own, the Landlock launcher sets no_new_privs and usually a seccomp filter. A peer
whose namespaces differ from ours, or that carries more of those marks than we do, is refused; so
is one we cannot see (its /proc entry unreadable): when the check cannot tell, it says no."""

from __future__ import annotations

import os
import socket
import struct
from dataclasses import dataclass

PEERCRED = struct.Struct("3i")  # pid, uid, gid


@dataclass(frozen=True, slots=True)
class Confinement:
    mount_ns: str
    user_ns: str
    no_new_privs: int
    seccomp_filters: int


def confinement(pid: int) -> Confinement | None:
    try:
        status = dict(
            line.split(":", 1)
            for line in open(f"/proc/{pid}/status", encoding="utf-8").read().splitlines()
            if ":" in line
        )
        return Confinement(
            mount_ns=os.readlink(f"/proc/{pid}/ns/mnt"),
            user_ns=os.readlink(f"/proc/{pid}/ns/user"),
            no_new_privs=int(status.get("NoNewPrivs", "0").strip() or 0),
            seccomp_filters=int(status.get("Seccomp_filters", status.get("Seccomp", "0")).strip() or 0),
        )
    except (OSError, ValueError):
        return None


def refusal(sock: socket.socket) -> str | None:
    """Why the peer of ``sock`` may not talk to us; None when it is the user, unconfined."""
    try:
        pid, uid, _gid = PEERCRED.unpack(sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, PEERCRED.size))
    except OSError as exc:
        return f"cannot read the peer's credentials: {exc}"
    if uid != os.getuid():
        return f"uid {uid} is not this server's user"
    theirs, ours = confinement(pid), confinement(os.getpid())
    if theirs is None or ours is None:
        return f"cannot see process {pid}"
    if (theirs.mount_ns, theirs.user_ns) != (ours.mount_ns, ours.user_ns):
        return f"process {pid} runs in another namespace (a sandbox)"
    if theirs.no_new_privs > ours.no_new_privs or theirs.seccomp_filters > ours.seccomp_filters:
        return f"process {pid} runs confined (a sandbox)"
    return None
