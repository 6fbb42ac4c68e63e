"""Bubblewrap again, when a path it was told to cover vanished before it could (stdlib only, loaded
by path by the launcher).

The agent lists what to cover when a command starts (host sockets from ``/proc/net/unix``, the
protected paths, the warm server's folder); bubblewrap mounts over each a few milliseconds later.
A socket removed meanwhile (a program ending, another test's server) made bubblewrap stop before
the command ran, with "Can't create file at PATH" (the path is gone, and the read-only root cannot
hold a new one) or "Can't bind mount /dev/null on PATH" (it went between bubblewrap's own check
and its mount). So the launcher asks bubblewrap for its status (``--json-status-fd``: an
``exit-code`` line only once the sandbox was built and the command started) and, when the sandbox
was not built and a path it was to cover is no longer what was covered (a socket or file, a
folder, anything at all), runs it again without that path: what is gone needs no cover. Nothing of the
command ran in a failed attempt, so running it again repeats nothing.
"""

from __future__ import annotations

import os
import stat

STATUS_OPTION = "--json-status-fd"
SETUP_FAILED = 1  # bubblewrap's exit status when it dies building the sandbox
MAX_ATTEMPTS = 4
NOTE = "agent sandbox: {path} vanished while the sandbox was being built; started again without covering it\n"


class Retry:
    """The attempts at one bubblewrap command: the argv of each, and whether one more is due."""

    def __init__(self, argv: list[str]) -> None:
        self.argv = list(argv)
        self.attempts = 0
        self._status_read = -1
        self._status_write = -1
        self._stdio: list[int] = []

    def next_argv(self) -> list[str]:
        """The next attempt's argv, with a status pipe for bubblewrap (call before the fork)."""
        self.attempts += 1
        self._status_read, self._status_write = os.pipe()
        os.set_inheritable(self._status_write, True)
        if not self._stdio:  # a later attempt gets the command's own stdin, stdout and stderr back
            self._stdio = [os.dup(fd) for fd in (0, 1, 2)]
        return [self.argv[0], STATUS_OPTION, str(self._status_write), *self.argv[1:]]

    def started(self) -> None:
        """In the parent, after the fork: bubblewrap holds the status pipe's write end now."""
        os.close(self._status_write)
        self._status_write = -1

    def again(self, status: int) -> bool:
        """After bubblewrap ended with ``status``: True when it never built the sandbox because a
        path to cover vanished; then stdio is back as it was and :meth:`next_argv` is ready."""
        report = self._status()
        if status != SETUP_FAILED or b'"exit-code"' in report or self.attempts >= MAX_ATTEMPTS:
            return False
        pruned, gone = without_vanished(self.argv)
        if not gone:
            return False
        self.argv = pruned
        for fd, saved in zip((0, 1, 2), self._stdio, strict=True):
            os.dup2(saved, fd)
        for path in gone:
            _write(2, NOTE.format(path=path))
        return True

    def close(self) -> None:
        for fd in (*self._stdio, self._status_read, self._status_write):
            if fd >= 0:
                os.close(fd)
        self._stdio, self._status_read, self._status_write = [], -1, -1

    def _status(self) -> bytes:
        """What bubblewrap wrote (without waiting: the command may hold the pipe still)."""
        if self._status_read < 0:
            return b""
        os.set_blocking(self._status_read, False)
        chunks = []
        try:
            while chunk := os.read(self._status_read, 4096):
                chunks.append(chunk)
        except BlockingIOError:
            pass
        os.close(self._status_read)
        self._status_read = -1
        return b"".join(chunks)


def without_vanished(argv: list[str]) -> tuple[list[str], list[str]]:
    """``argv`` without the covers of paths that are no longer what they were when it was made: a
    socket covered with ``/dev/null``, a folder masked with a tmpfs, a path bound read-only over
    itself. Returns the new argv and the paths dropped."""
    end = argv.index("--") if "--" in argv else len(argv)
    kept: list[str] = []
    gone: list[str] = []
    i = 0
    while i < end:
        word = argv[i]
        if word == "--ro-bind" and i + 2 < end:
            source, target = argv[i + 1], argv[i + 2]
            if (source == "/dev/null" and not _is(target, _coverable)) or (
                source == target and not os.path.lexists(target)
            ):
                gone.append(target)
                i += 3
                continue
        if word == "--tmpfs" and i + 3 < end and argv[i + 2 : i + 4] == ["--remount-ro", argv[i + 1]]:
            if not _is(argv[i + 1], stat.S_ISDIR):
                gone.append(argv[i + 1])
                i += 4
                continue
        kept.append(word)
        i += 1
    return kept + argv[end:], gone


def _coverable(mode: int) -> bool:
    return stat.S_ISSOCK(mode) or stat.S_ISREG(mode)  # a socket, or a secret file (hidden.py)


def _is(path: str, kind) -> bool:
    try:
        return kind(os.lstat(path).st_mode)
    except OSError:
        return False


def _write(fd: int, text: str) -> None:
    try:
        os.write(fd, text.encode("utf-8", "replace"))
    except OSError:
        pass  # the command's stderr is closed
