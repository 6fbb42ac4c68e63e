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
import time

from tests.conftest import REPO, provider_env
from tests.fake_server import Reply, ToolCall
from tests.processes import alive


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
    env = {**os.environ, "PYTHONPATH": str(REPO), "TERM": "xterm-256color", "AGENT_HOME": str(isolated_home),
           **provider_env(server, "openai-chat")}
    argv = [sys.executable, "-m", "agent_cli", "--provider", "openai-chat", "-m", "m", "read huge.txt"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI on the pseudo-terminal
        os.chdir(tmp_path)
        os.execve(sys.executable, argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = bytearray()
    threading.Thread(target=drain, args=(fd, seen), daemon=True).start()
    try:
        deadline = time.monotonic() + 60
        while not server.requests and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.requests, "the TUI never asked the model"
        time.sleep(2.0)  # the reply arrives and read_file starts its thread
        assert alive(pid)
        os.write(fd, b"\x03")
        time.sleep(0.3)
        os.write(fd, b"\x03")
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                break
            time.sleep(0.05)
        assert not alive(pid), "the TUI is still running after Ctrl+C twice"
    finally:
        if alive(pid):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
