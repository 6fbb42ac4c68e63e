"""Dropping every Linux capability for good (stdlib only: the sandbox launcher loads it by path).

Root keeps all its capabilities across ``execve`` unless the bounding set is empty: emptying it,
the ambient and inheritable sets and then the effective and permitted ones leaves a process (and
everything it executes) with none, so a sandboxed command run by root cannot unmount, remount,
open raw sockets or signal other users' processes.
"""

from __future__ import annotations

import ctypes
import os

PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
CAPABILITY_VERSION_3 = 0x20080522
DEFAULT_LAST_CAP = 40  # CAP_CHECKPOINT_RESTORE, when /proc does not say


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def last_cap() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as f:
            return int(f.read().strip())
    except (OSError, ValueError):
        return DEFAULT_LAST_CAP


def drop_all() -> None:
    """Empty the bounding and ambient sets, then the effective, permitted and inheritable ones.
    Raises OSError when a capability that is held cannot be dropped."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    for cap in range(last_cap() + 1):
        # EINVAL: a capability this kernel does not know; EPERM only without CAP_SETPCAP, in which
        # case the bounding set cannot grant anything back on exec either (checked below).
        libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0)
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)  # EINVAL before 4.3: nothing to clear
    header = _CapHeader(CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"capset: {os.strerror(err)}")
    # Root's bounding set is what exec would grant again; another user's is inert (no_new_privs).
    if held(("CapEff", "CapPrm", "CapAmb", *(("CapBnd",) if os.geteuid() == 0 else ()))):
        raise OSError(0, "capabilities are still held after dropping them")


def held(fields: tuple[str, ...] = ("CapEff",)) -> bool:
    """Whether this process still holds a capability in any of ``fields`` of /proc/self/status."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            lines = f.read().splitlines()
    except OSError:
        return False
    for line in lines:
        name, _, value = line.partition(":")
        if name in fields and int(value.strip(), 16) != 0:
            return True
    return False
