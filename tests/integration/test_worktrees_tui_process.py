"""`agent -w NAME` as a user runs it: the real TUI process on a pseudo-terminal starts in the
worktree, and when it quits with the worktree changed, the terminal asks keep or remove."""

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
from tests.integration.test_tui_process_quit import drain
from tests.processes import alive
from tests.waiting import wait_for
from tests.worktree_helpers import agent_branches, checkout_state, committed_repo


def test_agent_w_starts_in_the_worktree_and_asks_on_leaving(server, tmp_path, isolated_home):
    repo = committed_repo(tmp_path / "repo")
    before = checkout_state(repo)
    server.script(Reply(tool_calls=[ToolCall("shell", {"command": "echo tui > tui.txt"})]), Reply(text="wrote tui.txt"))
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "TERM": "xterm-256color",
        "AGENT_HOME": str(isolated_home),
        **provider_env(server, "openai-chat"),
    }
    argv = [sys.executable, "-m", "agent_cli", "--provider", "openai-chat", "-m", "m", "-a", "never", "-w", "tui", "go"]
    pid, fd = pty.fork()
    if pid == 0:  # the child: the TUI on the pseudo-terminal
        os.chdir(repo)
        os.execve(sys.executable, argv, env)
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    seen = bytearray()
    threading.Thread(target=drain, args=(fd, seen), daemon=True).start()
    folder = None
    try:
        wait_for(lambda: len(server.requests) >= 2, within=60, what="the turn")
        folder = wait_for(lambda: next((isolated_home / "worktrees").glob("repo-*/tui"), None), what="the worktree")
        wait_for(lambda: (folder / "tui.txt").exists(), what="the command to run in the worktree")
        wait_for(lambda: b"wrote tui.txt" in seen, within=30, what="the answer")
        os.write(fd, b"/quit\r")
        wait_for(lambda: b"[K]eep / [r]emove" in seen, within=30, what="the question")
        os.write(fd, b"r\r")
        wait_for(lambda: os.waitpid(pid, os.WNOHANG)[0], within=30, what="the TUI to end")
    finally:
        if alive(pid):
            os.kill(pid, 9)
            os.waitpid(pid, 0)
        os.close(fd)
    assert b"created worktree tui on branch agent/tui" in seen
    assert b"removed worktree tui" in seen
    assert not folder.exists() and agent_branches(repo) == []
    assert checkout_state(repo) == before and not (repo / "tui.txt").exists()
