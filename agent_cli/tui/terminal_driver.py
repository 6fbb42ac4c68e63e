"""Textual's Linux driver, made to notice when its terminal goes away.

A closed window, tmux pane or ssh connection hangs the terminal up. The kernel's SIGHUP goes to
the session leader, often a shell around the agent (`sh -c 'cd repo && agent'`), so the agent
itself may see no signal at all: its reads return EOF and its writes EIO. Textual's driver then
spins on the empty reads, and its writer thread dies on the first failed write, after which the
next 30 writes fill its queue and shutting down blocks forever. This driver's output swallows
write errors (the writer thread never dies, so closing never blocks), and a thread waiting for
the hang-up on the terminal tells the app the moment it happens, whatever the app was doing.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any, Protocol, cast, runtime_checkable

from textual import events
from textual.app import App
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from agent_cli.hangup import watch_for_hangup

QUIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)
EXIT_GRACE_SECONDS = 10.0  # for the app's own way out (turn stopped, session closed) before a hard exit
HANGUP_EXIT_CODE = 129  # as for SIGHUP


@runtime_checkable
class TerminalApp(Protocol):
    def terminal_lost(self) -> None:
        """Quit as Ctrl+C twice does (called on the app's event loop)."""

    def escape_read(self) -> bool:
        """Esc was just read (called on the input thread, before the key is queued): True when
        the app acted on it at once and the key is not to be delivered."""
        ...


class TerminalDriver(LinuxDriver):
    """LinuxDriver that tells its app (``terminal_lost``) once when the terminal hangs up or
    stops taking output, and ends the process if the app has not ended it a little later.

    It also hands Esc to the app the moment it is read (``escape_read``): a key waits in
    Textual's message queues behind the work of whatever is being drawn (a long markdown answer
    mounts hundreds of widgets, each with messages of its own), and Esc must stop a streamed
    answer at once."""

    def __init__(self, app: App[Any], **options) -> None:
        super().__init__(app, **options)
        self._file = cast(IO[str], LossTolerantOutput(self._file, self._lost))
        self._owner = app if isinstance(app, TerminalApp) else None
        self._lost_once = threading.Event()
        self._watching = False

    def process_message(self, message: Message) -> None:
        if (
            isinstance(message, events.Key)
            and message.key == "escape"
            and self._owner is not None
            and self._owner.escape_read()
        ):
            return
        super().process_message(message)

    def start_application_mode(self) -> None:
        super().start_application_mode()
        if not self._watching:  # SIGCONT starts application mode again
            self._watching = True
            watch_for_hangup(self.fileno, self._lost, name="terminal-hangup")

    def _lost(self) -> None:
        if self._lost_once.is_set():
            return
        self._lost_once.set()
        with contextlib.suppress(RuntimeError):  # the loop has closed: the app is ending anyway
            if self._owner is not None:
                self._loop.call_soon_threadsafe(self._owner.terminal_lost)
        # Children are under a supervisor that ends them with this process, and the session
        # file's lock goes with it: a hard exit after the grace loses nothing written.
        backstop = threading.Timer(EXIT_GRACE_SECONDS, os._exit, (HANGUP_EXIT_CODE,))
        backstop.daemon = True
        backstop.start()


class LossTolerantOutput:
    """The terminal's output file for Textual's writer thread: a write or flush that fails
    (EIO once the terminal is gone) is dropped and reported instead of ending the thread."""

    def __init__(self, file: IO[str], on_lost: Callable[[], None]) -> None:
        self._file = file
        self._on_lost = on_lost
        self._lost = False

    def write(self, text: str) -> int:
        if not self._lost:
            try:
                return self._file.write(text)
            except (OSError, ValueError):  # ValueError: the file was closed
                self._give_up()
        return len(text)

    def flush(self) -> None:
        if not self._lost:
            try:
                self._file.flush()
            except (OSError, ValueError):
                self._give_up()

    def fileno(self) -> int:
        return self._file.fileno()

    def isatty(self) -> bool:
        return self._file.isatty()

    def _give_up(self) -> None:
        self._lost = True
        self._on_lost()


def print_if_possible(text: str) -> None:
    """Print to a terminal that may be gone (then nothing is printed and nothing raised)."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stdout, flush=True)


def quit_on_signals(exit_app: Callable[[int], object]) -> None:
    """SIGTERM and SIGHUP (the terminal closed) quit as Ctrl+C twice does, so the running command
    stops with the session: by default they ended the process at once and, outside a sandbox,
    left the command running. ``exit_app`` gets 128 + the signal's number."""
    loop = asyncio.get_running_loop()
    for signum in QUIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):  # not the main thread
            loop.add_signal_handler(signum, exit_app, 128 + signum)


def stop_quitting_on_signals() -> None:
    for signum in QUIT_SIGNALS:
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            asyncio.get_running_loop().remove_signal_handler(signum)
