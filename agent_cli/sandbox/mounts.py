"""A private mount namespace for the Landlock launcher (stdlib only, loaded by path).

Landlock cannot deny a path beneath one it allows, nor connecting to a filesystem Unix socket
(on kernels up to ABI 7). A mount namespace can: protected paths inside the workspace are bound
read-only over themselves (a mountpoint can be neither written, removed nor renamed, so
``mv .git .gitx`` fails too), host sockets outside the writable roots and the agent's secret files
are covered by ``/dev/null``, and the warm exec server's folder by an empty read-only tmpfs, wherever it lies. Root gets one directly; another user through a user namespace when the kernel lets
unprivileged users create one. Whatever cannot be done is returned, never silently skipped.
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Callable, Iterable

CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_RDONLY, MS_NOSUID, MS_NODEV, MS_NOEXEC = 1, 2, 4, 8
MS_REMOUNT, MS_NOATIME, MS_NODIRATIME = 32, 1024, 2048
MS_BIND, MS_REC, MS_PRIVATE, MS_RELATIME = 4096, 16384, 1 << 18, 1 << 21
# statvfs flags -> the mount flags a remount must keep (locked ones would make it fail)
KEPT_FLAGS = (
    (os.ST_NOSUID, MS_NOSUID),
    (os.ST_NODEV, MS_NODEV),
    (os.ST_NOEXEC, MS_NOEXEC),
    (os.ST_NOATIME, MS_NOATIME),
    (os.ST_NODIRATIME, MS_NODIRATIME),
    (os.ST_RELATIME, MS_RELATIME),
)


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_void_p]
    return libc


def _fail(what: str) -> OSError:
    err = ctypes.get_errno()
    return OSError(err, f"{what}: {os.strerror(err)}")


def enter_private_namespace() -> None:
    """A mount namespace of this process's own whose changes the host never sees."""
    libc = _libc()
    uid, gid = os.geteuid(), os.getegid()
    if libc.unshare(CLONE_NEWNS) != 0:
        if uid == 0 or libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0:
            raise _fail("unshare(mount namespace)")
        _write("/proc/self/setgroups", "deny")
        _write("/proc/self/uid_map", f"{uid} {uid} 1")
        _write("/proc/self/gid_map", f"{gid} {gid} 1")
    if libc.mount(None, b"/", None, MS_REC | MS_PRIVATE, None) != 0:
        raise _fail("mount(/, private)")


def _write(path: str, text: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(text)


def bind_read_only(paths: Iterable[str]) -> None:
    """Each existing path becomes a read-only mount of itself."""
    libc = _libc()
    for path in paths:
        if not os.path.lexists(path) or os.path.islink(path):
            continue  # a symlink is resolved by the caller; nothing to protect at a dangling one
        raw = os.fsencode(path)
        if libc.mount(raw, raw, None, MS_BIND | MS_REC, None) != 0:
            if not os.path.lexists(path):
                continue  # removed since it was listed: nothing left to protect
            raise _fail(f"bind {path}")
        kept = sum(ms for st, ms in KEPT_FLAGS if os.statvfs(path).f_flag & st)
        if libc.mount(None, raw, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None) != 0:
            raise _fail(f"remount {path} read-only")


def hide(paths: Iterable[str]) -> None:
    """Cover each path (a host socket, a secret file) with /dev/null: connecting to it is refused,
    reading it gives nothing. One gone when its turn comes (its server ended since it was listed)
    needs no cover."""
    libc = _libc()
    for path in paths:
        if not _is(path, _coverable):
            continue
        if libc.mount(b"/dev/null", os.fsencode(path), None, MS_BIND, None) != 0:
            if not _is(path, _coverable):
                continue  # it went between the look and the mount
            raise _fail(f"cover {path}")


def _coverable(mode: int) -> bool:
    return stat.S_ISSOCK(mode) or stat.S_ISREG(mode)


def mask(paths: Iterable[str]) -> None:
    """Cover each folder with an empty, read-only tmpfs: nothing in it can be reached, removed or
    replaced from here (the host's folder is left as it is)."""
    libc = _libc()
    flags = MS_RDONLY | MS_NOSUID | MS_NODEV | MS_NOEXEC
    for path in paths:
        if not _is(path, stat.S_ISDIR):
            continue  # gone since it was listed: nothing in it to reach
        if libc.mount(b"tmpfs", os.fsencode(path), b"tmpfs", flags, b"mode=0755,size=4k") != 0:
            if not _is(path, stat.S_ISDIR):
                continue
            raise _fail(f"mask {path}")


def _is(path: str, kind: Callable[[int], bool]) -> bool:
    try:
        return kind(os.lstat(path).st_mode)
    except OSError:
        return False
