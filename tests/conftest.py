"""Shared fixtures: an isolated $AGENT_HOME, a fake model server, and `agent exec` runners."""

from __future__ import annotations

import asyncio
import compileall
import contextlib
import os
import socket
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.fake_server import FakeModelServer

REPO = Path(__file__).resolve().parent.parent
PROVIDER_KEYS = ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL")


# What runs after the parallel part (`pytest -n 2 -m "not serial"`), alone on the machine
# (`pytest -m serial`): a path under tests/ (a folder or a file) and why it is not written for
# running beside other tests. Single tests are marked where they are (`@pytest.mark.serial`).
SERIAL = {
    # Textual's pilot and snapshots: waits are on the app's own clock and an idle machine
    "tui/": "the TUI through Textual's pilot",
    # ...except the import checks, which only run Python processes of their own
    "tui/test_imports.py": None,
    "integration/test_remote_tui.py": "the TUI through Textual's pilot",
    # a real TUI on a pseudo-terminal or in tmux, drawing long answers against deadlines
    "integration/test_tui_hangup.py": "a real terminal, 'gone within 3 s' and long answers drawn",
    "integration/test_tui_paste.py": "a real terminal (tmux)",
    "integration/test_tui_resume_picker.py": "a real terminal (tmux)",
    "integration/test_host_sessions.py": "a real terminal (tmux)",
    "integration/test_app_server_codex_tui.py": "a real terminal (tmux) running the Codex TUI",
    # heavy by design: they load the machine, and anything beside them would time out
    "integration/test_sandbox_real_tree_exec.py": "twenty agents at once",
    "integration/test_batch_ray.py": "a Ray cluster of two nodes",
    "integration/test_app_server_web.py": "Chromium",
}


def serial_reason(path: Path) -> str | None:
    """Why the test file at ``path`` runs alone (None: it runs in parallel); the longest match wins."""
    relative = path.relative_to(REPO / "tests").as_posix()
    matches = [
        prefix for prefix in SERIAL if relative == prefix or (prefix.endswith("/") and relative.startswith(prefix))
    ]
    return SERIAL[max(matches, key=len)] if matches else None


def pytest_collection_modifyitems(config, items):
    for item in items:
        if serial_reason(Path(item.path)) is not None:
            item.add_marker(pytest.mark.serial)


def pytest_sessionstart(session):
    """The agent processes tests start import this tree: compiled once here (half a second) rather
    than by each of them, which with PYTHONDONTWRITEBYTECODE set (as on this kind of machine) is
    every time: about 0.2 s of every `agent exec`, a quarter of the exec tests' time."""
    for folder in ("agent_cli", "tests"):
        compileall.compile_dir(REPO / folder, quiet=1)


@pytest.fixture(autouse=True)
def isolated_home(tmp_path_factory, monkeypatch):
    """No test reads the user's ~/.agent, a real provider's key, or the user's login profile.

    Commands run as login shells; a developer's profile (pyenv, nvm, conda) would run inside every
    test command, slow it down, and can leave a stale lock behind when a test kills a command."""
    home = tmp_path_factory.mktemp("agent-home")
    monkeypatch.setenv("AGENT_HOME", str(home))
    if "PYENV_ROOT" not in os.environ and (Path.home() / ".pyenv").is_dir():
        monkeypatch.setenv("PYENV_ROOT", str(Path.home() / ".pyenv"))  # pyenv's shims find their home
    monkeypatch.setenv("HOME", str(tmp_path_factory.mktemp("user-home")))
    # No language server found on PATH starts for another test's edits (tests/integration/test_lsp_*.py
    # turn them on): each would add its start and wait to every patch of a .py file.
    monkeypatch.setenv("AGENT_LSP_AUTODETECT", "0")
    for name in PROVIDER_KEYS:
        monkeypatch.delenv(name, raising=False)
    # `agent exec` starts cold in tests (each test's own process); tests/integration/test_warm_exec.py
    # runs it through a warm server of its own. AGENT_TEST_WARM=1 runs every test's exec warm (with
    # XDG_RUNTIME_DIR set, through one server; without it, each test's AGENT_HOME holds its own).
    if os.environ.get("AGENT_TEST_WARM") != "1":
        monkeypatch.setenv("AGENT_NO_DAEMON", "1")
    return home


@pytest.fixture(autouse=True)
async def close_model_clients(monkeypatch):
    """Close the model clients of the sessions a test created in its event loop, while it still runs.

    An SDK client left open is closed when it is garbage collected, which may happen under a later
    test's event loop, where closing the first loop's connections fails ("Event loop is closed")."""
    from agent_cli.session.session import Session

    loop = asyncio.get_running_loop()
    created: list[Session] = []
    init = Session.__init__

    def tracking_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:  # made by a sync fixture: its client runs in the test's loop
            running = loop
        if running is loop:
            created.append(self)

    monkeypatch.setattr(Session, "__init__", tracking_init)
    yield
    for session in created:
        for client in session.services.clients.made():
            if hasattr(client, "aclose"):
                with contextlib.suppress(RuntimeError):  # a sync test may have used it in a loop of its own
                    await client.aclose()


@pytest.fixture
def server():
    with FakeModelServer() as fake:
        yield fake


@pytest.fixture
def script_used_up(server):
    """For test modules whose every test must use up the fake server's script (`usefixtures` it)."""
    yield
    server.assert_done()


@pytest.fixture
def listener():
    """A TCP socket listening on 127.0.0.1, for tests that check network access is cut."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen()
    server.settimeout(0.5)
    yield server
    server.close()


@dataclass
class Result:
    returncode: int
    stdout: str
    stderr: str


def provider_env(server: FakeModelServer, provider: str) -> dict[str, str]:
    if provider == "anthropic":
        return {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "test-key"}
    return {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": "test-key"}


def git_init(path: Path) -> Path:
    """A new git repository at ``path`` (created with its parents when missing)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(path)], check=True)
    return path


def agent_process_env(**extra: str) -> dict[str, str]:
    """The environment of an agent process a test starts: this one without provider keys, the
    source tree importable, no colour; ``extra`` on top."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_KEYS}
    env.update({"PYTHONPATH": str(REPO), "NO_COLOR": "1"})
    env.update(extra)
    return env


def run_agent(
    args: list[str], *, cwd: Path, env: dict[str, str] | None = None, stdin: str | None = None, timeout: float = 60
) -> Result:
    """Run `python -m agent_cli ARGS` as a user would, with a clean environment."""
    full_env = agent_process_env(**(env or {}))
    proc = subprocess.run(
        [sys.executable, "-m", "agent_cli", *args],
        cwd=cwd,
        env=full_env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=timeout,
    )
    return Result(proc.returncode, proc.stdout, proc.stderr)
