"""A seccomp filter through ctypes that denies every socket family but ``AF_UNIX``.

Stdlib only, like ``landlock.py``: the sandbox launcher loads it by path. Landlock (ABI 4+)
covers TCP only, and older kernels not even that; refusing ``socket()`` for IPv4/IPv6 (TCP, UDP,
raw alike), ``AF_PACKET``, ``AF_NETLINK`` and the rest takes the network and the host's network
configuration away whatever the kernel. Unix sockets stay allowed (many tools need them locally;
which ones a command may reach is the launcher's business). ``io_uring_setup`` is refused too,
since io_uring can open sockets without the syscall.

With the network allowed, the launcher installs a filter that allows everything (:func:`mark`): a
mark on the process that it cannot remove and /proc shows (``Seccomp_filters``), by which the warm
exec server and its launcher tell a sandboxed process from the user's (agent_cli/socket_peer.py).
"""

from __future__ import annotations

import ctypes
import errno
import os
import platform
import struct

PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
AF_UNIX, AF_INET, AF_INET6 = 1, 2, 10
IO_URING_SETUP = 425  # same number on x86_64 and aarch64
X32_SYSCALL_BIT = 0x40000000

# machine -> (AUDIT_ARCH_*, socket syscall number)
ARCHES = {"x86_64": (0xC000003E, 41), "aarch64": (0xC00000B7, 198), "arm64": (0xC00000B7, 198)}

# Classic BPF opcodes used below.
LD_W_ABS = 0x20  # BPF_LD | BPF_W | BPF_ABS
JEQ_K = 0x15  # BPF_JMP | BPF_JEQ | BPF_K
JGE_K = 0x35  # BPF_JMP | BPF_JGE | BPF_K
RET_K = 0x06  # BPF_RET | BPF_K
OFF_NR, OFF_ARCH, OFF_ARG0 = 0, 4, 16  # struct seccomp_data (arg0's low word on little endian)


def supported() -> bool:
    return platform.system() == "Linux" and platform.machine() in ARCHES


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def socket_filter(arch: int, socket_nr: int, allow_inet: bool = False) -> bytes:
    """The BPF program: deny with EACCES every socket family but AF_UNIX (and, with
    ``allow_inet``, IPv4 and IPv6: the command's own network namespace holds only a loopback),
    and io_uring."""
    deny = SECCOMP_RET_ERRNO | errno.EACCES
    families = [AF_UNIX, *((AF_INET, AF_INET6) if allow_inet else ())]
    deny_at = 8 + len(families)  # the index of ``ret deny``; ``ret allow`` follows it
    allow_at = deny_at + 1

    def to(target: int, index: int) -> int:
        return target - index - 1  # BPF jumps count the instructions skipped

    program = [
        _insn(LD_W_ABS, 0, 0, OFF_ARCH),
        _insn(JEQ_K, 1, 0, arch),  # another ABI (32-bit compat): deny everything it tries
        _insn(RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.ENOSYS),
        _insn(LD_W_ABS, 0, 0, OFF_NR),
        _insn(JGE_K, to(deny_at, 4), 0, X32_SYSCALL_BIT),  # x32 calls on x86_64: deny
        _insn(JEQ_K, to(deny_at, 5), 0, IO_URING_SETUP),
        _insn(JEQ_K, 0, to(allow_at, 6), socket_nr),  # not socket() -> allow
        _insn(LD_W_ABS, 0, 0, OFF_ARG0),
        *(_insn(JEQ_K, to(allow_at, 8 + i), 0, family) for i, family in enumerate(families)),
        _insn(RET_K, 0, 0, deny),  # any other family
        _insn(RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    return b"".join(program)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def deny_sockets_but_unix(allow_inet: bool = False) -> None:
    """Install the filter on this process (inherited across exec). Needs no_new_privs first.
    ``allow_inet``: IPv4 and IPv6 sockets too, in a network namespace of the command's own."""
    if not supported():
        raise OSError(0, f"seccomp filter not supported on {platform.machine()}")
    arch, socket_nr = ARCHES[platform.machine()]
    _install(socket_filter(arch, socket_nr, allow_inet))


def mark() -> None:
    """A filter that allows every call: only there to be seen (and kept across exec)."""
    _install(_insn(RET_K, 0, 0, SECCOMP_RET_ALLOW))


def _install(program: bytes) -> None:
    buffer = ctypes.create_string_buffer(program, len(program))
    prog = _SockFprog(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(prog), 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl(PR_SET_SECCOMP): {os.strerror(err)}")
