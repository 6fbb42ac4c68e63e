"""What the warm exec tests share (tests/integration/test_warm_exec*.py): runs against one warm
server of their own (its socket under a private XDG_RUNTIME_DIR), started by a first cold run as a
user's would be, and found and ended by PID."""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

from tests.conftest import REPO, provider_env
from tests.fake_server import Reply
from tests.processes import alive
from tests.waiting import wait_for

EXEC = ["exec", "--provider", "openai-chat", "-m", "test-model", "-s", "danger-full-access"]


class Warm:
    """The environment of runs that share one warm server, and that server."""

    def __init__(self, server, tmp_path: Path) -> None:
        self.runtime = Path(tempfile.mkdtemp(prefix="warm-"))  # short: a socket's path has at most 107 bytes
        self.work = tmp_path / "work"
        self.work.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k != "AGENT_NO_DAEMON" and not k.endswith("_API_KEY")}
        self.env.update(
            provider_env(server, "openai-chat"),
            PYTHONPATH=str(REPO),
            NO_COLOR="1",
            XDG_RUNTIME_DIR=str(self.runtime),
            AGENT_DAEMON_IDLE_SECONDS="120",
        )

    def start(self, *args: str, env: dict | None = None, prefix: tuple = (), **popen) -> subprocess.Popen:
        popen.setdefault("stdin", subprocess.DEVNULL)
        popen.setdefault("cwd", self.work)
        return subprocess.Popen(
            [*prefix, sys.executable, "-m", "agent_cli", *EXEC, *args],
            env={**self.env, **(env or {})},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            **popen,
        )

    def run(
        self, *args: str, env: dict | None = None, input: str | None = None, **popen
    ) -> subprocess.CompletedProcess:
        if input is not None:
            popen["stdin"] = subprocess.PIPE
        proc = self.start(*args, env=env, **popen)
        out, err = proc.communicate(input, timeout=120)
        return subprocess.CompletedProcess(proc.args, proc.returncode, out, err)

    def servers(self) -> list[int]:
        sockets = list((self.runtime / f"agent-cli-{os.getuid()}").glob("warm-*.sock"))
        return [pid for path in sockets for pid in server_pids(path)]

    def warmed(self, server) -> int:
        """A cold first run, then the server it started, listening."""
        server.script(Reply(text="cold"))
        assert self.run("hi").returncode == 0
        return wait_for(
            lambda: self.servers() and self.socket_answers() and self.servers()[0], within=60, what="a warm server"
        )

    def socket_answers(self) -> bool:
        [path] = (self.runtime / f"agent-cli-{os.getuid()}").glob("warm-*.sock")
        with socket.socket(socket.AF_UNIX) as probe:
            try:
                probe.connect(str(path))
            except OSError:
                return False
        return True

    def stop(self) -> None:
        for pid in self.servers():
            os.kill(pid, signal.SIGTERM)
            wait_for(lambda pid=pid: not alive(pid), within=15, what="the warm server to end")
        shutil.rmtree(self.runtime, ignore_errors=True)


def server_pids(path: Path) -> list[int]:
    """Live warm servers of ``path`` (their command line ends with the lock descriptor they got)."""
    prefix = "\0".join((sys.executable, "-P", "-m", "agent_cli.warm.server", str(path))).encode() + b"\0"
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "cmdline").read_bytes().startswith(prefix) and alive(int(entry.name)):
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def children_of(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1]) == pid:
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
