"""The watchdog of a session's background processes: kills them when the agent dies.

It runs as its own small process (standard library only, started with ``python -I``), in its own
session so Ctrl+C at the terminal does not reach it. The agent writes ``add PGID`` lines to its
stdin; when stdin reaches end of file (the agent quit, crashed or was killed with SIGKILL: the
kernel closes the pipe either way) it kills every registered process group and every process
whose environment carries the session's marker, which also finds commands that left their group
with ``setsid`` to daemonize. Processes started with ``keep_alive`` are never registered and do
not carry the marker.
"""

from __future__ import annotations

import os
import signal
import sys
import time

MARKER_VARIABLE = "AGENT_BACKGROUND"
SWEEP_ROUNDS = 5  # a daemon forking while we sweep is caught by the next round


def marked_pids(token: str) -> list[int]:
    """Processes whose environment holds ``AGENT_BACKGROUND=<token>...``."""
    needle = f"{MARKER_VARIABLE}={token}".encode()
    found = []
    me = os.getpid()
    for name in os.listdir("/proc"):
        if not name.isdigit() or int(name) == me:
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as handle:
                environ = handle.read()
        except OSError:
            continue
        if any(entry.startswith(needle) for entry in environ.split(b"\0")):
            found.append(int(name))
    return found


def sweep(groups: set[int], token: str) -> None:
    for _ in range(SWEEP_ROUNDS):
        for pgid in groups:
            try:
                os.killpg(pgid, signal.SIGKILL)
            except OSError:
                pass
        pids = marked_pids(token)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except OSError:
                pass
        if not pids:
            return
        time.sleep(0.05)


def main() -> None:
    token = sys.argv[1]
    groups: set[int] = set()
    for sig in (signal.SIGINT, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, lambda *_: (sweep(groups, token), os._exit(0)))
    for line in sys.stdin:
        words = line.split()
        if len(words) == 2 and words[1].isdigit():
            (groups.add if words[0] == "add" else groups.discard)(int(words[1]))
    sweep(groups, token)


if __name__ == "__main__":
    main()
