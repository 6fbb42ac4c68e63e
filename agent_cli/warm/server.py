"""The warm server: one process per user and install that has imported the program and the
provider SDKs, and forks a child for each `agent exec` a launcher hands it.

    python -m agent_cli.warm.server SOCKET

It stays single-threaded (forking a process with threads can copy a lock some thread held), keeps
nothing secret (its environment holds no keys; each run brings its own), answers only a launcher of
its own user confined exactly as it is (peer.py: never a sandboxed command), refuses a launcher of
other code or once a file it loaded changed on disk (loaded.py; it quits, so the next run starts a
fresh one), and ends itself after an idle time or when its socket is taken away.

A launcher first says who it is and what it needs (fingerprint, limits, priority; nothing secret),
and only once the server has said yes sends its environment, arguments and descriptors.

A child becomes the launcher's run: its standard streams and working folder (passed as
descriptors), environment, umask and arguments, default signal handling, then the same `cli.main`
a cold start calls. The server reports how the child ended (exit status or signal); the child
dies at once if its launcher does, as a cold process would have (its commands go with it).
"""

from __future__ import annotations

import atexit
import fcntl
import gc
import os
import platform
import resource
import selectors
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path

import anthropic  # noqa: F401 - imported here, once, for every run that follows
import httpcore2  # noqa: F401
import openai  # noqa: F401

from agent_cli import cli
from agent_cli import socket_peer as peer
from agent_cli.warm.loaded import LoadedCode
from agent_cli.warm.protocol import (
    DEFAULT_IDLE_SECONDS,
    GO,
    IDLE_ENV,
    STREAMS,
    Messages,
    install_fingerprint,
    send_message,
)

REQUEST_TIMEOUT = 5.0  # a launcher sends its request at once
# The server's own standard streams (on /dev/null), kept referenced: a child replaces them, and
# one of these freed there would close the descriptor that is by then the launcher's stream.
SERVER_STREAMS = (sys.stdin, sys.stdout, sys.stderr)


class Server:
    def __init__(self, path: Path, idle_seconds: float, loaded: LoadedCode) -> None:
        self.path = path
        self.idle_seconds = idle_seconds
        self.fingerprint = install_fingerprint()
        self.loaded = loaded
        self.confinement = peer.confinement()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.children: dict[int, socket.socket] = {}
        self.wakeup_read, self.wakeup_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self.last_active = time.monotonic()

    def bind(self, lock: int | None = None) -> bool:
        """Take the socket path, unless another live server holds it (a lock beside it decides;
        ``lock``: that lock, already taken by the launcher that started this server)."""
        if lock is None:
            lock = os.open(f"{self.path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        os.set_inheritable(lock, False)  # never passed on to a run's commands
        self.lock = lock
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        self.path.unlink(missing_ok=True)
        old = os.umask(0o177)
        try:
            self.listener.bind(str(self.path))
        finally:
            os.umask(old)
        self.listener.listen(64)
        self.inode = os.stat(self.path).st_ino
        return True

    def serve(self) -> None:
        signal.set_wakeup_fd(self.wakeup_write)
        signal.signal(signal.SIGCHLD, lambda *_: None)
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, lambda *_: self._stop())
        selector = selectors.DefaultSelector()
        selector.register(self.listener, selectors.EVENT_READ)
        selector.register(self.wakeup_read, selectors.EVENT_READ)
        if self.loaded.fileno() >= 0:
            selector.register(self.loaded.fileno(), selectors.EVENT_READ)
        self.running = True
        while True:
            ready = selector.select(timeout=5.0)
            for key, _mask in ready:
                if key.fileobj is self.wakeup_read:
                    while _drain(self.wakeup_read):
                        pass
                elif key.fileobj is self.listener and self.running:
                    self._accept()
            self._reap()
            if (
                not self._still_ours()
                or not self.loaded.unchanged()  # an SDK upgraded or patched: quit, not wait for a run
                or (not self.children and time.monotonic() - self.last_active > self.idle_seconds)
            ):
                self.running = False
            if not self.running and self.listener.fileno() != -1:  # no new runs; those going on end first
                selector.unregister(self.listener)
                self._close()
            if not self.running and not self.children:
                break

    def _stop(self) -> None:
        self.running = False

    def _still_ours(self) -> bool:
        try:
            return os.stat(self.path).st_ino == self.inode
        except OSError:
            return False

    def _accept(self) -> None:
        try:
            conn, _ = self.listener.accept()
        except OSError:
            return
        self.last_active = time.monotonic()
        try:
            conn.settimeout(REQUEST_TIMEOUT)
            if peer.trusted(conn, self.confinement):  # this user, and not inside a sandbox this server is not in
                self._serve(conn, Messages(conn))
        except (OSError, ValueError):
            pass
        if conn.fileno() != -1 and conn not in self.children.values():
            conn.close()

    def _serve(self, conn: socket.socket, messages: Messages) -> None:
        """First what the launcher needs (nothing secret): a yes or no; then, after a yes, its
        environment, arguments and descriptors, and a child forked for them."""
        hello, _ = messages.next()
        if hello is None:
            return
        if hello.get("fingerprint") != self.fingerprint or not self.loaded.unchanged():  # other code: stale
            self.running = False
            self._release()  # before the caller hears it: at its end it starts a server for its code
            send_message(conn, {"stale": True})
            return
        if threading.active_count() != 1:  # something started a thread: forking is no longer safe
            self.running = False
            return
        if not can_give(hello):  # this caller's limits or priority are beyond the server's: cold
            send_message(conn, {"cold": True})
            return
        send_message(conn, {"ready": True})
        request, fds = messages.next(max_fds=STREAMS)
        if request is None or len(fds) != STREAMS:
            _close_all(fds)
            return
        request = {**request, **hello}
        pid = os.fork()
        if pid == 0:
            self._become_child(conn, fds, request)  # never returns
        _close_all(fds)
        self.children[pid] = conn
        try:
            conn.settimeout(None)
            send_message(conn, {"pid": pid})
        except OSError:
            pass

    def _reap(self) -> None:
        while self.children:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            conn = self.children.pop(pid, None)
            if conn is None:
                continue
            if os.WIFSIGNALED(status):
                outcome = {"signal": os.WTERMSIG(status)}
            else:
                outcome = {"exit": os.waitstatus_to_exitcode(status)}
            try:
                send_message(conn, outcome)
            except OSError:
                pass
            conn.close()
            self.last_active = time.monotonic()

    def _become_child(self, conn: socket.socket, fds: list[int], request: dict) -> None:
        try:  # nothing of the server's may run on in a child
            signal.set_wakeup_fd(-1)
            for other in self.children.values():
                other.close()
            self.listener.close()
            for fd in (self.wakeup_read, self.wakeup_write, self.lock):
                if fd != -1:
                    os.close(fd)
            self.loaded.close()
            become_run(conn, fds, request)
        except KeyboardInterrupt:  # Ctrl+C before the run began
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
            os._exit(1)
        except BaseException:  # noqa: BLE001
            os._exit(1)
        os._exit(run_as_cold(request["argv"]))

    def _close(self) -> None:
        self._release()
        self.listener.close()

    def _release(self) -> None:
        """The socket's name and the lock: a new server may start while the runs of this one finish."""
        if self._still_ours():
            self.path.unlink(missing_ok=True)
        if self.lock != -1:
            os.close(self.lock)
            self.lock = -1


def run_as_cold(argv: list[str]) -> int:
    """``cli.main`` and the end a cold interpreter would give it: a SystemExit's status (a message
    printed to stderr, as Python does), a traceback and status 1 for an error, death by SIGINT for an
    uncaught Ctrl+C; then threads joined, ``atexit`` handlers run and the streams flushed (the
    server's own teardown never runs in a child)."""
    status = 1
    try:
        status = cli.main(argv)
    except SystemExit as exit_:
        status = exit_code(exit_.code)
    except KeyboardInterrupt:
        traceback.print_exc()
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:  # noqa: BLE001 - as a cold start would show it
        traceback.print_exc()
    _finish()
    return status if isinstance(status, int) else exit_code(status)


def exit_code(code) -> int:
    if code is None or isinstance(code, int):
        return code or 0
    print(code, file=sys.stderr)
    return 1


def _finish() -> None:
    for thread in threading.enumerate():
        if thread is not threading.current_thread() and not thread.daemon:
            thread.join()
    try:
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - printed by atexit itself
        pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass


def can_give(request: dict) -> bool:
    """Whether a child can take the caller's resource limits and priority (a child may lower its
    own, never raise a hard limit or its priority)."""
    try:
        for name, (_soft, hard) in request["limits"].items():
            current = resource.getrlimit(getattr(resource, name))[1]
            if current != resource.RLIM_INFINITY and (hard == resource.RLIM_INFINITY or hard > current):
                return False
        return request["nice"] >= os.getpriority(os.PRIO_PROCESS, 0)
    except (AttributeError, KeyError, TypeError, ValueError, OSError):
        return False


def become_run(conn: socket.socket, fds: list[int], request: dict) -> None:
    """Turn this fresh child into the launcher's run, once the launcher knows its pid (it gone, or
    given up waiting, the run never starts)."""
    for sig in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1, signal.SIGUSR2):
        signal.signal(sig, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)  # before GO: the launcher relays after it
    for sig in request["ignored"]:  # as the caller had them (nohup: SIGHUP), as a cold start inherits
        signal.signal(sig, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_SETMASK, request["blocked"])
    conn.settimeout(None)
    if conn.recv(1) != GO:
        os._exit(1)
    for name, limit in request["limits"].items():
        resource.setrlimit(getattr(resource, name), tuple(limit))
    os.setpriority(os.PRIO_PROCESS, 0, request["nice"])
    stdin, stdout, stderr, cwd = fds
    for source, target in ((stdin, 0), (stdout, 1), (stderr, 2)):
        os.dup2(source, target)
        os.close(source)
    os.fchdir(cwd)
    os.close(cwd)
    os.umask(request["umask"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = [request["argv0"], *request["argv"]]
    sys.stdin, sys.stdout, sys.stderr = (standard_stream(fd, request["env"]) for fd in (0, 1, 2))
    sys.__stdin__, sys.__stdout__, sys.__stderr__ = sys.stdin, sys.stdout, sys.stderr
    os.setpgid(0, 0)  # away from the server's group: a signal for the server is not for the run
    threading.Thread(target=_die_with_launcher, args=(conn,), name="warm-launcher", daemon=True).start()


def standard_stream(fd: int, env: dict[str, str]):
    """Python's own choice for a standard stream: line-buffered where interactive (stderr always),
    the encoding and error handler of PYTHONIOENCODING or else the interpreter's."""
    template = SERVER_STREAMS[fd]
    encoding, _, errors = env.get("PYTHONIOENCODING", "").partition(":")
    stream = open(
        fd,
        "r" if fd == 0 else "w",
        encoding=encoding or template.encoding,
        errors=errors or template.errors,
        newline="\n",  # no newline translation either way, as Python's own standard streams on POSIX
        closefd=False,
    )
    if fd:
        stream.reconfigure(
            line_buffering=fd == 2 or os.isatty(fd), write_through=env.get("PYTHONUNBUFFERED", "") not in ("", "0")
        )
    return stream


def _die_with_launcher(conn: socket.socket) -> None:
    """The launcher sends nothing after its request: the read returns when it is gone (killed with
    SIGKILL, say), and the run goes as a cold process would have gone with it."""
    try:
        conn.recv(1)
    except OSError:
        pass
    os.kill(os.getpid(), signal.SIGKILL)


def _drain(fd: int) -> bool:
    try:
        return bool(os.read(fd, 512))
    except BlockingIOError:
        return False


def _close_all(fds: list[int]) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


def main(argv: list[str]) -> int:
    """``SOCKET [--lock-fd FD] [--since TIME]``: the lock its launcher took, and when the launcher
    started it (a loaded file changed after that is stale; without it, now)."""
    path = Path(argv[0])
    options = dict(zip(argv[1::2], argv[2::2]))
    idle = float(os.environ.get(IDLE_ENV) or DEFAULT_IDLE_SECONDS)
    os.chdir("/")  # not the folder of the run that started it, kept busy for the idle time
    platform.platform()  # openai's request headers run `uname -p` once: here, not in every run
    server = Server(path, idle, LoadedCode(float(options.get("--since") or time.time())))
    lock = int(options["--lock-fd"]) if "--lock-fd" in options else None
    if not server.bind(lock):
        return 0
    gc.freeze()  # what the imports made is shared with every child, never walked again
    server.serve()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
