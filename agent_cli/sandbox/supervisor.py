"""The launcher's last job: run the command as a child and leave nothing of it behind (stdlib
only, loaded by path).

The launcher stays as the command's parent. It is a child subreaper, so whatever the command
leaves running (``cmd &``, ``setsid nohup cmd &``, double-forked daemons) is re-parented to it
instead of to init; when the command ends, everything left is sent SIGTERM and then SIGKILL.
The launcher gets a parent-death signal, so if the agent dies (even by SIGKILL) it does the same
cleanup, and the command itself is SIGKILLed if the launcher is.
"""

from __future__ import annotations

import ctypes
import os
import sys
import time

TYPE_CHECKING = False  # no ``typing`` at run time: the launcher stays a bare interpreter
if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_cli.sandbox.bwrap_retry import Retry

try:  # the C module itself: ``signal`` wraps it in enums, whose import costs more than the rest
    import _signal as signal  # type: ignore[import-not-found]  # no stub; the functions signal re-exports
except ImportError:  # another interpreter
    import signal  # type: ignore[no-redef]

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
TERM_GRACE_S = 0.3  # what is left of a finished command gets this long after SIGTERM
GIVE_UP_S = 5.0  # a process stuck in the kernel ignores even SIGKILL: do not wait for it forever
STOP_SIGNALS = (signal.SIGTERM, signal.SIGHUP, signal.SIGINT)


_libc: list[ctypes.CDLL] = []  # loaded once, in the parent: a child forked with threads about loads nothing


def _prctl(option: int, value: int) -> None:
    if not _libc:
        loaded = ctypes.CDLL(None, use_errno=True)
        loaded.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
        _libc.append(loaded)
    if _libc[0].prctl(option, value, 0, 0, 0) != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"prctl({option}): {os.strerror(err)}")


def bind_to_parent(sig: int = signal.SIGTERM) -> None:
    """Get ``sig`` when the parent dies; if it died already, act as if it just did."""
    parent = os.getppid()
    _prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent or parent == 1:
        os.kill(os.getpid(), sig)


def become_subreaper() -> None:
    _prctl(PR_SET_CHILD_SUBREAPER, 1)


class _Stopped(Exception):
    def __init__(self, sig: int):
        self.sig = sig


def _raise_stopped(sig: int, _frame) -> None:
    # Only the first stop counts: the parent-death signal comes again as each thread of the dying
    # agent exits, and a second one must not cut the clean-up short.
    for stop in STOP_SIGNALS:
        signal.signal(stop, signal.SIG_IGN)
    raise _Stopped(sig)


def run(argv: list[str], started: Callable[[], None] | None = None, retry: Retry | None = None) -> int:
    """Run ``argv`` as a child, wait for it, clean up after it; the exit status to pass on.
    ``started`` is called once the child runs (the network bridge starts its threads then: no
    fork ever happens with other threads about). ``retry``: ``argv`` is bubblewrap, run again
    when it could not build the sandbox because a path it was to cover vanished (bwrap_retry.py)."""
    for sig in STOP_SIGNALS:
        signal.signal(sig, _raise_stopped)
    child = _start(retry.next_argv() if retry is not None else argv, retry)
    stopped = 0
    status = 128 + signal.SIGKILL
    try:
        signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
        _stand_aside()
        if started is not None:
            started()
        status = _wait_for(child)
        while retry is not None and retry.again(status):
            child = _start(retry.next_argv(), retry)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            _stand_aside()
            status = _wait_for(child)
    except _Stopped as stop:  # the agent stopped the command, or died
        stopped = stop.sig
        status = 128 + stop.sig
    finally:
        for sig in STOP_SIGNALS:
            signal.signal(sig, signal.SIG_IGN)  # from here on, our own group signals miss us
        if retry is not None:
            retry.close()
    if stopped:
        _signal_all(stopped)  # pass it on (after the agent's death nobody else will)
    clean_up()
    return status


def _start(argv: list[str], retry: Retry | None) -> int:
    """Fork and exec ``argv``; the child's pid. Stop signals stay blocked in this process until
    the caller unblocks them: one must reach the child with its default action, not our handler
    (which would swallow it before the exec)."""
    signal.pthread_sigmask(signal.SIG_BLOCK, STOP_SIGNALS)
    child = os.fork()
    if child == 0:  # the command
        try:
            for sig in STOP_SIGNALS:
                signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, STOP_SIGNALS)
            _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
            os.execvp(argv[0], argv)
        except OSError as exc:
            os.write(2, f"agent sandbox: cannot run {argv[0]}: {exc.strerror}\n".encode())
        os._exit(127)
    if retry is not None:
        retry.started()
    return child


def _stand_aside() -> None:
    """Keep no end of the command's pipes open: the agent reads its output until they close."""
    null = os.open(os.devnull, os.O_RDONLY)  # reading is all Landlock leaves us; nothing is written
    for fd in (0, 1, 2):
        os.dup2(null, fd)
    os.close(null)
    sys.stdout = sys.stderr = None  # a note Python would print (and fail to) must not change our exit status


def _wait_for(child: int) -> int:
    """Reap children (adopted orphans too) until ``child`` itself has ended; its exit status."""
    while True:
        pid, status = os.waitpid(-1, 0)
        if pid == child:
            return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


def clean_up() -> None:
    """SIGTERM to whatever the command left, a short grace, then SIGKILL until nothing is left.
    Killing a child re-parents its own children to us, so each round finds the next layer."""
    if not _reap():
        return
    _signal_all(signal.SIGTERM)
    start = time.monotonic()
    while _reap() and time.monotonic() < start + GIVE_UP_S:
        if time.monotonic() >= start + TERM_GRACE_S:
            _signal_all(signal.SIGKILL)
        time.sleep(0.01)


def _signal_all(sig: int) -> None:
    """``sig`` to our process group (the command's, which we ignore) and to each of our children
    (adopted ones have left the group: ``setsid``)."""
    targets = list(_children())
    if sig != signal.SIGKILL and os.getpgid(0) == os.getpid():  # only a group we lead: never our caller's
        try:
            os.killpg(os.getpgid(0), sig)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in targets:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _reap() -> bool:
    """Reap what has ended; True while children remain."""
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return False
        if pid == 0:
            return True


def _children() -> list[int]:
    me = os.getpid()
    try:
        with open(f"/proc/{me}/task/{me}/children", encoding="ascii") as f:
            return [int(pid) for pid in f.read().split()]
    except OSError:
        return [pid for pid in _pids() if _parent_of(pid) == me]


def _pids() -> list[int]:
    return [int(name) for name in os.listdir("/proc") if name.isdigit()]


def _parent_of(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as f:
            return int(f.read().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0
