"""Ctrl+C twice quits the real TUI process even while a tool still works in a thread (issue 27,
item 8): `agent` on a pseudo-terminal, the fake server, the process checked by PID."""

from __future__ import annotations

import fcntl
import os
import pty
import struct
import sys
import termios
import threading

from tests.conftest import REPO, provider_env
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, holds_open
from tests.waiting import wait_for


def drain(fd: int, seen: bytearray) -> None:
    """Keep reading the terminal so the app never blocks on a full pty."""
    while True:
        try:
            data = os.read(fd, 65536)
        except OSError:
            return
        if not data:
            return
        seen.extend(data)


def test_ctrl_c_twice_ends_the_tui_while_a_tool_thread_is_busy(server, tmp_path, isolated_home):
    with open(tmp_path / "huge.txt", "w") as handle:
        handle.write("a line of text\n" * 2000)
    os.truncate(tmp_path / "huge.txt", 1 << 40)  # sparse: minutes to read through, no disk used
    server.script(Reply(tool_calls=[ToolCall("read_file", {"path": "huge.txt"})]), Reply(text="never sent"))
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "AGENT_HOME": str(isolated_home),
        **provider_env(server, "openai-chat"),
    }
    argv = [sys.executable, "-m", "agent_cli", "--provider", "openai-chat", "-m", "m", "read huge.txt"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI on the pseudo-terminal
        os.chdir(tmp_path)
        os.execve(sys.executable, argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = bytearray()
    threading.Thread(target=drain, args=(fd, seen), daemon=True).start()
    try:
        huge = (tmp_path / "huge.txt").resolve()
        wait_for(lambda: holds_open(pid, huge), within=60, what="read_file to open huge.txt")
        os.write(fd, b"\x03")
        wait_for(lambda: b"again to quit" in seen, what="the TUI to take the first Ctrl+C")
        os.write(fd, b"\x03")
        wait_for(lambda: os.waitpid(pid, os.WNOHANG)[0], within=20, what="the TUI to end after Ctrl+C twice")
        assert not alive(pid)
    finally:
        if alive(pid):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
