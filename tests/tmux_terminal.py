"""The agent in a real terminal, as a person sees it: a tmux server of its own (``-L``), one
window running a command, keys and bracketed pastes sent as a terminal sends them, and the
screen read back as text. For tests and benchmarks; tests skip without tmux (`.ci/run` installs it)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from tests.conftest import agent_process_env
from tests.waiting import wait_for

TMUX = shutil.which("tmux")


def agent_command(args: list[str]) -> str:
    return shlex.join([sys.executable, "-m", "agent_cli", *args])


class TmuxTerminal:
    """``command`` run by ``sh -c`` in a ``width`` x ``height`` tmux window in ``cwd``."""

    def __init__(
        self, command: str, cwd: Path, env: dict[str, str], *, width: int = 120, height: int = 40, name: str = "agent"
    ) -> None:
        if TMUX is None:
            raise RuntimeError("tmux is not installed")
        self.socket = f"{name}-{os.getpid()}-{id(self)}"
        full_env = agent_process_env(TERM="xterm-256color", **env)
        full_env.pop("NO_COLOR", None)  # colours as a person sees them
        self._tmux("new-session", "-d", "-x", str(width), "-y", str(height), "-c", str(cwd), command, env=full_env)

    def _tmux(self, *args: str, env: dict[str, str] | None = None) -> str:
        done = subprocess.run(
            [TMUX or "tmux", "-L", self.socket, "-f", "/dev/null", *args],
            capture_output=True,
            text=True,
            check=False,
            env=env,
        )
        return done.stdout

    def screen(self) -> str:
        """The visible screen, as text."""
        return self._tmux("capture-pane", "-p")

    def wait_for_text(self, text: str, within: float = 60.0) -> str:
        def shown() -> str | None:
            screen = self.screen()
            return screen if text in screen else None

        return wait_for(shown, within, f"{text!r} on screen")

    def keys(self, *keys: str) -> None:
        """tmux key names (``Enter``, ``Escape``, ``C-c``) or literal text."""
        self._tmux("send-keys", *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-l", text)

    def paste(self, text: str) -> None:
        """``text`` pasted as a terminal pastes it: bracketed when the app asked for that (``-p``)."""
        self._tmux("set-buffer", "--", text)
        self._tmux("paste-buffer", "-p")

    def pane_pid(self) -> int:
        return int(self._tmux("display", "-p", "#{pane_pid}").strip())

    def close(self) -> None:
        """The window goes away (tmux signals the pane's group and closes its terminal)."""
        self._tmux("kill-server")
