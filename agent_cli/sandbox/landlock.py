"""Landlock (Linux 5.13+) through ctypes: let this process write only beneath given paths.

Stdlib only and no package imports: the sandbox launcher runs this file's sibling by path,
before anything else is loaded. Reads and execution stay unrestricted; every write-like right
(write, truncate, create, remove, rename across directories) is denied outside the allowed
paths. From ABI 4 on, TCP bind and connect can be denied too.

A restriction is permanent for the calling process and everything it executes.
"""

from __future__ import annotations

import ctypes
import os
import platform
from collections.abc import Iterable

# Syscall numbers are the same on x86_64 and aarch64 (both use the generic table for these).
SYS_CREATE_RULESET = 444
SYS_ADD_RULE = 445
SYS_RESTRICT_SELF = 446
CREATE_RULESET_VERSION = 1 << 0
RULE_PATH_BENEATH = 1
SUPPORTED_MACHINES = ("x86_64", "aarch64", "arm64")

# Filesystem rights (ABI in brackets when above 1).
WRITE_FILE = 1 << 1
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # [2] link or rename a file into another directory
TRUNCATE = 1 << 14  # [3]
NET_BIND_TCP = 1 << 0  # [4]
NET_CONNECT_TCP = 1 << 1  # [4]
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # [6] no connecting to abstract sockets made outside the sandbox
SCOPE_SIGNAL = 1 << 1  # [6] no signals to processes outside the sandbox
SCOPE_ABI = 6

FILE_WRITE_RIGHTS = WRITE_FILE | TRUNCATE  # the only write rights a rule on a file may carry
O_PATH = getattr(os, "O_PATH", 0o10000000)


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # the kernel struct is packed: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.restype = ctypes.c_int
    return libc


def _check(result: int, what: str) -> int:
    if result < 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")
    return result


def abi_version() -> int:
    """The kernel's Landlock ABI version; 0 when Landlock is missing, disabled or unsupported here."""
    if platform.system() != "Linux" or platform.machine() not in SUPPORTED_MACHINES:
        return 0
    try:
        version = _libc().syscall(SYS_CREATE_RULESET, None, ctypes.c_size_t(0), ctypes.c_uint32(CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return 0
    return max(0, int(version))


def write_rights(abi: int) -> int:
    """Every write-like right this ABI knows."""
    rights = WRITE_FILE | REMOVE_DIR | REMOVE_FILE | MAKE_CHAR | MAKE_DIR | MAKE_REG
    rights |= MAKE_SOCK | MAKE_FIFO | MAKE_BLOCK | MAKE_SYM
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    return rights


def set_no_new_privs() -> None:
    """Required before an unprivileged process may restrict itself (also for seccomp)."""
    PR_SET_NO_NEW_PRIVS = 38
    _check(_libc().prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0), "prctl(PR_SET_NO_NEW_PRIVS)")


def restrict_writes(
    writable_dirs: Iterable[str], writable_files: Iterable[str] = (), *, deny_tcp: bool = False, scope: bool = True
) -> int:
    """Deny writes outside ``writable_dirs`` (and to files other than ``writable_files``).

    ``deny_tcp`` also denies TCP bind/connect when the ABI supports it (4+); ``scope`` denies
    connecting to abstract Unix sockets and signalling processes outside the sandbox (ABI 6+).
    Paths that do not exist are skipped. Returns the ABI used. Raises OSError when Landlock is
    unavailable or a syscall fails; the caller must then not run the command.
    """
    abi = abi_version()
    if abi < 1:
        raise OSError(0, "Landlock is not available on this kernel")
    libc = _libc()
    handled = write_rights(abi)
    scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL if scope and abi >= SCOPE_ABI else 0
    attr = _RulesetAttr(handled, NET_BIND_TCP | NET_CONNECT_TCP if deny_tcp and abi >= 4 else 0, scoped)
    # The struct grew with the ABI: pass the size this kernel knows.
    size = ctypes.sizeof(ctypes.c_uint64) * (3 if abi >= SCOPE_ABI else 2 if abi >= 4 else 1)
    ruleset = _check(
        libc.syscall(SYS_CREATE_RULESET, ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0)),
        "landlock_create_ruleset",
    )
    try:
        for path in writable_dirs:
            _allow(libc, ruleset, path, handled)
        for path in writable_files:
            _allow(libc, ruleset, path, handled & FILE_WRITE_RIGHTS)
        set_no_new_privs()
        _check(libc.syscall(SYS_RESTRICT_SELF, ctypes.c_int(ruleset), ctypes.c_uint32(0)), "landlock_restrict_self")
    finally:
        os.close(ruleset)
    return abi


def _allow(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        fd = os.open(path, O_PATH | os.O_CLOEXEC)
    except OSError:
        return  # a root that does not exist cannot be written to anyway
    try:
        if not os.path.isdir(path):
            rights &= FILE_WRITE_RIGHTS  # directory-only rights on a file are EINVAL
        rule = _PathBeneathAttr(rights, fd)
        _check(
            libc.syscall(
                SYS_ADD_RULE,
                ctypes.c_int(ruleset),
                ctypes.c_int(RULE_PATH_BENEATH),
                ctypes.byref(rule),
                ctypes.c_uint32(0),
            ),
            f"landlock_add_rule({path})",
        )
    finally:
        os.close(fd)
