"""OpenAI's own Codex TUI (0.169, from tests/node) drives `agent app-server` with `codex --remote`,
in tmux: a shell command approved in Codex's own dialog, an interrupt, and the thread resumed in a
new TUI with its history shown. The TUI's config points at nothing but our server, and its proxy
variables at a closed port: it reaches no network. Every message our server sent is checked
against Codex's schema (app_server_helpers)."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Iterator

import pytest

from agent_cli.store.catalog import list_sessions
from agent_cli.store.thread_ids import session_uuid
from tests.app_server_helpers import CODEX, NO_CODEX, TOKEN, AppServer, AppServers, codex_missing
from tests.conftest import agent_process_env, git_init
from tests.fake_server import Reply, ToolCall
from tests.processes import alive, pids_running
from tests.waiting import wait_for

pytestmark = [
    pytest.mark.skipif(codex_missing(), reason=NO_CODEX),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (.ci/run installs it)"),
    pytest.mark.timeout(240),
]
CODEX_CONFIG = """\
check_for_update_on_startup = false
disable_paste_burst = true
[analytics]
enabled = false
[tui]
animations = false
notifications = false
show_tooltips = false
"""
NOWHERE = "http://127.0.0.1:9"  # nothing listens: any request the TUI made elsewhere would fail


class Tmux:
    def __init__(self, name: str) -> None:
        self.base = ["tmux", "-L", name, "-f", "/dev/null"]

    def run(self, *args: str) -> str:
        return subprocess.run([*self.base, *args], capture_output=True, text=True, check=True).stdout

    def open(self, window: str, command: str, env: dict[str, str]) -> None:
        exports = " ".join(f"{key}={shlex.quote(value)}" for key, value in env.items())
        self.run("new-window", "-t", "s", "-n", window, f"env -i {exports} sh -c {shlex.quote(command)}")

    def screen(self, window: str) -> str:
        return self.run("capture-pane", "-p", "-t", f"s:{window}")

    def shows(self, window: str, text: str, within: float = 60) -> str:
        def showing() -> str:
            screen = self.screen(window)
            return screen if text in screen else ""

        try:
            return wait_for(showing, within, f"{text!r} on screen")
        except AssertionError as exc:
            raise AssertionError(f"{exc}; the screen:\n{self.screen(window)}") from None

    def keys(self, window: str, *keys: str) -> None:
        self.run("send-keys", "-t", f"s:{window}", *keys)

    def answer(self, window: str, key: str, dialog: str, tries: int = 10) -> None:
        """Press ``key`` until ``dialog`` leaves the screen: a dialog may let a few moments pass
        before it takes keys, so that a key meant for the composer does not answer it."""
        for _ in range(tries):
            self.keys(window, key)
            try:
                wait_for(lambda: dialog not in self.screen(window), 2, "the dialog to close")
                return
            except AssertionError:
                continue
        raise AssertionError(f"{key!r} did not answer the dialog; the screen:\n{self.screen(window)}")

    def type(self, window: str, text: str) -> None:
        """Type ``text`` and, once the composer shows it, Enter."""
        self.keys(window, "-l", text)
        self.shows(window, f"› {text}")
        self.keys(window, "Enter")


@pytest.fixture
def tmux(tmp_path) -> Iterator[Tmux]:
    session = Tmux(f"agent-app-server-{os.getpid()}")
    session.run("new-session", "-d", "-s", "s", "-x", "150", "-y", "45")
    yield session
    subprocess.run([*session.base, "kill-server"], capture_output=True)


@pytest.fixture
def codex_env(tmp_path) -> dict[str, str]:
    home = tmp_path / "codex-home"
    home.mkdir()
    (home / "config.toml").write_text(CODEX_CONFIG)
    return {
        **{k: v for k, v in agent_process_env().items() if k in ("PATH", "HOME", "LANG", "TERM")},
        "TERM": "xterm-256color",
        "CODEX_HOME": str(home),
        "AGENT_TOKEN": TOKEN,
        **{name: NOWHERE for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy")},
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
    }


@pytest.fixture
def app_server(server, tmp_path) -> Iterator[AppServer]:
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN)
    token_file.chmod(0o600)
    repo = git_init(tmp_path / "repo")
    with AppServers(server, tmp_path) as servers:
        yield servers.start(repo, "--listen", "ws://127.0.0.1:0", "--ws-auth", "capability-token",
                            "--ws-token-file", str(token_file))  # fmt: skip


def codex(url: str, *args: str) -> str:
    return shlex.join([str(CODEX), *args, "--remote", url, "--remote-auth-token-env", "AGENT_TOKEN"])


def test_the_codex_tui_runs_an_approved_command_an_interrupt_and_a_resumed_thread(
    server, app_server, tmux, codex_env, isolated_home, tmp_path
):
    repo = tmp_path / "repo"
    server.script(
        Reply(
            text="I need to write outside the sandbox.",
            tool_calls=[
                ToolCall(
                    "shell",
                    {
                        "command": "touch made-by-codex.txt",
                        "sandbox_permissions": "require_escalated",
                        "justification": "the file goes in the repository",
                    },  # fmt: skip
                )
            ],
        ),
        Reply(text="The file is made."),
        Reply(text="Waiting a long time.", tool_calls=[ToolCall("shell", {"command": "sleep 43.1"})]),
        Reply(text="Back in the resumed thread."),
    )
    tmux.open("tui", f"cd {shlex.quote(str(repo))} && {codex(app_server.url)}", codex_env)
    tmux.shows("tui", "Ask Codex to do anything")

    tmux.type("tui", "make the file")
    dialog = tmux.shows("tui", "Would you like to run the following command?")
    assert "touch made-by-codex.txt" in dialog and "the file goes in the repository" in dialog
    assert not (repo / "made-by-codex.txt").exists()
    tmux.answer("tui", "y", "Would you like to run the following command?")
    tmux.shows("tui", "The file is made.")
    assert (repo / "made-by-codex.txt").exists()

    tmux.type("tui", "now wait")
    [sleeping] = wait_for(lambda: pids_running("sleep", "43.1"), 60, "the command to run")
    tmux.keys("tui", "Escape")
    tmux.shows("tui", "Conversation interrupted")
    assert wait_for(lambda: not alive(sleeping), 15, "the interrupted command to end")

    tmux.run("kill-window", "-t", "s:tui")  # the first TUI leaves; the thread stays on the server
    thread_id = session_uuid(list_sessions(isolated_home)[0].id)
    tmux.open("again", f"cd {shlex.quote(str(repo))} && {codex(app_server.url, 'resume', thread_id)}", codex_env)
    history = tmux.shows("again", "The file is made.")
    assert "make the file" in history and "Conversation interrupted" in tmux.screen("again")
    tmux.type("again", "and now?")
    tmux.shows("again", "Back in the resumed thread.")
    server.assert_done()


def no_network_namespace() -> str | None:
    """Why the TUI cannot be given a network namespace of its own here (None: it can). Only
    ``unshare -n`` as root keeps the user namespace: in another one (``unshare -rn``, as bubblewrap
    does) the server would rightly take it for a sandboxed process and refuse it."""
    if shutil.which("unshare") is None:
        return "unshare is not installed"
    done = subprocess.run(["unshare", "-n", "true"], capture_output=True, text=True)
    return None if done.returncode == 0 else f"unshare -n needs root: {done.stderr.strip()}"


def test_the_codex_tui_needs_no_network_over_the_unix_socket(server, tmux, codex_env, tmp_path):
    """In a network namespace of its own (no interface but a loopback of its own), the TUI reaches
    the server only through the socket file, and a turn runs."""
    if (why := no_network_namespace()) is not None:
        pytest.skip(why)
    server.script(Reply(text="Answered over the socket."))
    repo = git_init(tmp_path / "repo")
    with AppServers(server, tmp_path) as servers:
        running = servers.start(repo, "--listen", "unix://")
        command = shlex.join(["unshare", "-n", str(CODEX), "--remote", running.url])
        tmux.open("tui", f"cd {shlex.quote(str(repo))} && {command}", codex_env)
        tmux.shows("tui", "Ask Codex to do anything")
        tmux.type("tui", "hello from nowhere")
        tmux.shows("tui", "Answered over the socket.")
