"""Who is at the other end of a private Unix socket: the warm exec server's launcher checks its
server, and the server its launcher, before either hands the other anything; a client of the
per-user host (remote/host.py) checks the host the same way.

The same user is not enough: a sandboxed command is the same user. What tells them apart is what
the kernel reports about each process and no process can undo: its namespaces (bubblewrap makes new
mount, pid and user ones; the Landlock launcher a mount namespace), ``no_new_privs`` (set by both
mechanisms) and its seccomp filters (the Landlock launcher always installs one). Both ends must be
confined exactly alike: a launcher never reaches a server that is outside its sandbox (its run would
escape), nor one that is inside a sandbox it is not in (a sandboxed impostor would receive its keys
and descriptors). The peer is named by the kernel (``SO_PEERCRED``) and held by a pidfd while it is
read, so a process that ends meanwhile cannot lend its pid to another.
"""

from __future__ import annotations

import errno
import os
import signal
import socket
import struct

NAMESPACES = ("cgroup", "ipc", "mnt", "net", "pid", "user", "uts")
STATUS_FIELDS = (b"NoNewPrivs:", b"Seccomp:", b"Seccomp_filters:")
SO_PEERPIDFD = getattr(socket, "SO_PEERPIDFD", 77)  # Linux 6.5; Python names it from 3.13
NO_PIDFD = (errno.ENOPROTOOPT, errno.EINVAL)  # an older kernel: the pid alone


def confinement(pid: int | str = "self") -> tuple[str, ...] | None:
    """What confines process ``pid``, as the kernel shows it; None when it cannot be read (gone,
    or this process may not look: a sandboxed one may not look at a process outside its sandbox)."""
    try:
        with open(f"/proc/{pid}/status", "rb") as file:
            status = [line.strip() for line in file if line.startswith(STATUS_FIELDS)]
        links = []
        for name in NAMESPACES:
            try:
                links.append(os.readlink(f"/proc/{pid}/ns/{name}"))
            except FileNotFoundError:  # a namespace this kernel does not have
                links.append("-")
    except OSError:
        return None
    return (*(line.decode() for line in status), *links)


def trusted(sock: socket.socket, own: tuple[str, ...] | None = None) -> bool:
    """Whether the process at the other end of ``sock`` is this user's and confined exactly as this
    one is (``own``: this process's confinement, when known). A peer in another pid namespace has
    no pid here (0): refused."""
    pidfd = _pidfd(sock)
    if pidfd == -2:
        return False
    try:
        pid, uid, _gid = struct.unpack("3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, 12))
        if uid != os.getuid() or pid <= 0:
            return False
        theirs = confinement(pid)
        if pidfd >= 0:
            signal.pidfd_send_signal(pidfd, 0)  # still the process the socket named: its pid was not reused
        return theirs is not None and theirs == (own or confinement())
    except OSError:
        return False
    finally:
        if pidfd >= 0:
            os.close(pidfd)


def _pidfd(sock: socket.socket) -> int:
    """A pidfd of the peer; -1 where the kernel has none to give, -2 when it refused."""
    try:
        return sock.getsockopt(socket.SOL_SOCKET, SO_PEERPIDFD)
    except OSError as exc:
        return -1 if exc.errno in NO_PIDFD else -2
