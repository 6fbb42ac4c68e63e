"""A network namespace of the command's own, with only its loopback up (stdlib only, loaded by
path by the launcher).

In allow-list mode the launcher makes it for both mechanisms (bubblewrap then keeps it instead of
making its own), so that it can start the bridge (bridge.py) in it before the command runs:
nothing in it reaches the host's network, its DNS server or the agent's own loopback ports; the
bridge's port is the one way out. Root gets one directly; another user through a user namespace
when the kernel allows unprivileged ones (a user namespace made for the mount namespace already
gives the right).
"""

from __future__ import annotations

import _socket
import ctypes
import fcntl
import os
import struct

CLONE_NEWNET = 0x40000000
CLONE_NEWUSER = 0x10000000
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFREQ = "16sh"  # struct ifreq: the interface name, then ifr_flags (padding follows)
IFREQ_SIZE = 40


def enter_private_network() -> None:
    """Leave the host's network namespace for a new, empty one with the loopback up.
    Raises OSError when it cannot (the command must then not run)."""
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(CLONE_NEWNET) != 0:
        uid, gid = os.geteuid(), os.getegid()
        if uid == 0 or libc.unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0:
            err = ctypes.get_errno()
            raise OSError(err, f"unshare(network namespace): {os.strerror(err)}")
        for path, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
            with open(f"/proc/self/{path}", "w", encoding="ascii") as f:
                f.write(text)
    loopback_up()


def loopback_up() -> None:
    sock = _socket.socket(_socket.AF_INET, _socket.SOCK_DGRAM)
    try:
        request = struct.pack(IFREQ, b"lo", 0).ljust(IFREQ_SIZE, b"\0")
        flags = struct.unpack_from(IFREQ, fcntl.ioctl(sock.fileno(), SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock.fileno(), SIOCSIFFLAGS, struct.pack(IFREQ, b"lo", flags | IFF_UP).ljust(IFREQ_SIZE, b"\0"))
    finally:
        sock.close()
