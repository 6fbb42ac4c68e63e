"""Noticing that whoever reads our output went away: a terminal that hung up (a closed window,
tmux pane or ssh connection), or a pipe whose reader closed it. Often no signal says so (the
kernel's SIGHUP goes to the terminal's session leader, a shell around the agent), and nothing
else does until the next write fails, which may be minutes away while a command runs."""

from __future__ import annotations

import os
import select
import stat
import threading
from collections.abc import Callable

GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def watch_for_hangup(fd: int, on_hangup: Callable[[], object], name: str = "hangup-watch") -> threading.Thread | None:
    """A daemon thread that sleeps in poll() on ``fd`` (a terminal or a pipe) and calls
    ``on_hangup`` once its other end is gone. No event is asked for, so only a hang-up or an error
    wakes it: nothing runs while it waits. Files and sockets are not watched (None)."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return None
    if not (os.isatty(fd) or stat.S_ISFIFO(mode)):
        return None
    poller = select.poll()
    poller.register(fd, 0)

    def wait() -> None:
        while True:
            try:
                events = poller.poll()
            except InterruptedError:
                continue
            except OSError:
                break
            if any(mask & GONE for _fd, mask in events):
                break
        on_hangup()

    thread = threading.Thread(target=wait, name=name, daemon=True)
    thread.start()
    return thread
