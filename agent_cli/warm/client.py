"""The launcher's side of a warm start: hand this run to the warm server, stand in for the child it
forks (signals relayed to it, its exit status or its death by a signal made this process's), and
start a server for next time when there is none.

Before it hands over anything, the launcher makes sure the server is the user's and confined
exactly as the launcher is (peer.py): a launcher inside a sandbox never reaches a server outside it,
and a sandboxed process that took the socket's place gets nothing. Then it says what it needs
(nothing secret) and sends its environment, arguments and descriptors only once the server said yes.

Everything unusual falls back to a cold start, silently: no server yet (it is started once this
cold run has ended, so it never competes with it), a server of other code (it refuses and quits),
a server it cannot vouch for, a socket folder that is not private, no Unix sockets."""

from __future__ import annotations

import atexit
import fcntl
import os
import signal
import socket
import sys
import time

from agent_cli import socket_peer as peer
from agent_cli.paths import private_dir
from agent_cli.warm.protocol import (
    DEFAULT_IDLE_SECONDS,
    GO,
    IDLE_ENV,
    INTERPRETER_ENV,
    NO_DAEMON_ENV,
    READ_AT_IMPORT,
    Messages,
    install_fingerprint,
    limits,
    send_message,
    socket_dir,
    socket_path,
)

RELAYED = (
    signal.SIGINT,
    signal.SIGTERM,
    signal.SIGHUP,
    signal.SIGQUIT,
    signal.SIGUSR1,
    signal.SIGUSR2,
    signal.SIGWINCH,
)
CONNECT_TIMEOUT = 2.0
LOCK_FD = 3  # where the server finds the lock its launcher took
MAX_SOCKET_PATH = 107  # sun_path's size, less the final NUL
SERVER_ENV = ("PATH", "HOME", "TMPDIR", "XDG_RUNTIME_DIR", *INTERPRETER_ENV)


def wanted(argv: list[str]) -> bool:
    """A warm start for `agent exec`, unless turned off (`--no-daemon`, AGENT_NO_DAEMON=1) or the
    environment sets something the SDKs read only when imported."""
    if argv[:1] != ["exec"] or "--no-daemon" in argv:
        return False
    if os.environ.get(NO_DAEMON_ENV, "") not in ("", "0") or turned_off_in_config(argv):
        return False
    flags = sys.flags  # what the server's interpreter (started without options) would not share
    if flags.dev_mode or flags.optimize or flags.isolated or flags.no_site or flags.ignore_environment or sys._xoptions:
        return False
    return not any(name in os.environ for name in READ_AT_IMPORT) and hasattr(socket, "send_fds")


def turned_off_in_config(argv: list[str]) -> bool:
    """``exec_daemon = false`` in the user's config.toml, or ``-c exec_daemon=false``; an unreadable
    file is left to the run to report (it starts cold)."""
    for at, word in enumerate(argv):
        setting = (
            word.split("=", 1)[1]
            if word.startswith("--config=")
            else argv[at + 1]
            if word in ("-c", "--config") and at + 1 < len(argv)
            else ""
        )
        if setting.replace(" ", "") == "exec_daemon=false":
            return True
    home = os.environ.get("AGENT_HOME") or os.path.join(os.path.expanduser("~"), ".agent")
    path = os.path.join(os.path.expanduser(home), "config.toml")
    try:
        with open(path, "rb") as file:
            data = file.read()
    except OSError:
        return False
    if b"exec_daemon" not in data:  # the common case: no TOML parser to load
        return False
    import tomllib  # noqa: PLC0415 - only for a config that names the key

    try:
        return tomllib.loads(data.decode()).get("exec_daemon") is False
    except (ValueError, UnicodeDecodeError):
        return True


def run(argv: list[str]) -> int | None:
    """This run's exit status, done by a forked child of the warm server; None when it must run
    cold here (a server is then started at exit for the next run)."""
    path = socket_path()
    if len(os.fsencode(path)) > MAX_SOCKET_PATH or not private_dir(socket_dir()):
        return None
    try:
        fingerprint = install_fingerprint()
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(CONNECT_TIMEOUT)
        sock.connect(str(path))
    except OSError:
        atexit.register(start_server, path)
        return None
    try:
        if not peer.trusted(sock):  # not the user's server, or not in this launcher's sandbox: nothing sent
            return None
        return _hand_over(sock, argv, fingerprint, path)
    finally:
        sock.close()


def _hand_over(sock: socket.socket, argv: list[str], fingerprint: str, path) -> int | None:
    # An ignored signal (nohup's SIGHUP) stays ignored here, and in the child; but Ctrl+C, which a
    # script's background job inherits ignored, stops the run as it stops a cold exec (headless/exec.py).
    ignored = [
        int(sig)
        for sig in (*RELAYED, signal.SIGTSTP)
        if sig != signal.SIGINT and signal.getsignal(sig) == signal.SIG_IGN
    ]
    relay = Relay()
    previous = {sig: signal.signal(sig, relay.forward) for sig in RELAYED if sig not in ignored}
    if signal.SIGTSTP not in ignored:
        previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, relay.suspend)
    try:
        outcome = _run_there(sock, argv, fingerprint, path, relay, ignored)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        if relay.child is None:  # no run there: a signal that came meanwhile is this process's (it runs cold)
            for signum in relay.pending:
                os.kill(os.getpid(), signum)
    if outcome is None or not outcome:  # cold; or the server died under the child: its status is lost
        return None if outcome is None else 1
    if "signal" in outcome:  # die the same way, as the shell would have seen the child die
        sys.stdout.flush()
        signal.signal(outcome["signal"], signal.SIG_DFL)
        os.kill(os.getpid(), outcome["signal"])
        return 128 + outcome["signal"]
    return outcome["exit"]


def _run_there(sock: socket.socket, argv: list[str], fingerprint: str, path, relay: Relay, ignored: list[int]):
    """How the child ended (an empty dict: unknown), or None to run cold. First what the run needs
    (nothing secret); its environment and descriptors only once the server said yes."""
    messages = Messages(sock)
    hello = {"fingerprint": fingerprint, "limits": limits(), "nice": os.getpriority(os.PRIO_PROCESS, 0)}
    try:
        send_message(sock, hello)
        answer, _ = messages.next()
    except (OSError, ValueError):
        answer = None
    if not answer or not answer.get("ready"):  # other code (it quits), limits it cannot give, or gone
        if not answer or not answer.get("cold"):
            atexit.register(start_server, path)
        return None
    umask = os.umask(0o22)
    os.umask(umask)
    request = {"argv": argv, "argv0": sys.argv[0], "env": dict(os.environ), "umask": umask, "ignored": ignored}
    request["blocked"] = [int(sig) for sig in signal.pthread_sigmask(signal.SIG_BLOCK, [])]
    cwd = os.open(".", os.O_RDONLY | os.O_DIRECTORY)
    try:
        send_message(sock, request, [0, 1, 2, cwd])  # the environment and descriptors: last
        reply, _ = messages.next()
        if reply and "pid" in reply:
            sock.sendall(GO)
    except (OSError, ValueError):
        return None  # the child, if there is one, ends when this socket closes: it never started
    finally:
        os.close(cwd)
    if not reply or "pid" not in reply:  # gone meanwhile
        atexit.register(start_server, path)
        return None
    sock.settimeout(None)
    relay.started(reply["pid"])
    while True:
        try:
            outcome, _ = messages.next()
        except InterruptedError:
            continue
        return outcome or {}


class Relay:
    """Signals for the run, forwarded to its child; those that come before its pid is known are
    kept and forwarded then. Ctrl+Z stops the child and then this launcher, and `fg` resumes both."""

    def __init__(self) -> None:
        self.child: int | None = None
        self.pending: list[int] = []

    def started(self, child: int) -> None:
        self.child = child
        for signum in self.pending:
            _relay(child, signum)

    def forward(self, signum: int, _frame) -> None:
        if self.child is None:
            self.pending.append(signum)
        else:
            _relay(self.child, signum)

    def suspend(self, signum: int, _frame) -> None:
        if self.child is not None:
            _relay(self.child, signal.SIGTSTP)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # stopped here until SIGCONT
        signal.signal(signal.SIGTSTP, self.suspend)
        if self.child is not None:
            _relay(self.child, signal.SIGCONT)


def _relay(child: int, signum: int) -> None:
    try:
        os.kill(child, signum)
    except ProcessLookupError:
        pass


def start_server(path) -> None:
    """A warm server for the next run, in a session of its own, with no secrets in its
    environment (each run brings its own). Only one: the launcher takes the server's lock first and
    hands it over, so of runs ending at once only the first starts one (a server importing the
    program only to find another one there costs a second of CPU)."""
    lock = claim_lock(path)
    if lock is None:  # a server runs, or is starting
        return
    env = {name: os.environ[name] for name in SERVER_ENV if name in os.environ}
    env.setdefault(IDLE_ENV, os.environ.get(IDLE_ENV, str(DEFAULT_IDLE_SECONDS)))
    since = ["--since", repr(time.time())]  # a file it loads changed after this: stale (loaded.py)
    actions: list[tuple] = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]  # never our pipes
    actions.append((os.POSIX_SPAWN_DUP2, lock, LOCK_FD))  # inheritable in the server alone
    try:
        os.posix_spawn(
            sys.executable,
            # -P: the caller's folder is not on sys.path (a repository's openai.py is never imported)
            [sys.executable, "-P", "-m", "agent_cli.warm.server", str(path), "--lock-fd", str(LOCK_FD), *since],
            env,
            file_actions=actions,
            setsid=True,
        )
    except OSError:
        pass
    finally:
        os.close(lock)  # the server's copy holds it now


def claim_lock(path) -> int | None:
    """The server's lock, taken (close-on-exec: only the server gets a copy), or None when someone
    holds it."""
    try:
        lock = os.open(f"{path}.lock", os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    except OSError:
        return None
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(lock)
        return None
    if lock == LOCK_FD:  # dup2 onto itself would leave it close-on-exec
        lock, old = os.dup(lock), lock
        os.close(old)
    return lock
