"""First run without an error: `agent login` / `agent logout`, the provider whose key is present,
and `agent doctor`; real subprocesses against the fake server (issue 35, items 1-3)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import agent_process_env, git_init, provider_env, run_agent
from tests.fake_server import FakeModelServer, Reply
from tests.waiting import wait_for

SECRET = "sk-test-secret-4242"


def test_login_stores_the_key_0600_and_never_prints_it(server, tmp_path, isolated_home):
    env = {"OPENAI_BASE_URL": server.openai_base_url}
    result = run_agent(["login", "--with-api-key"], cwd=tmp_path, env=env, stdin=SECRET + "\n")
    assert result.returncode == 0, result.stderr
    stored = isolated_home / "auth.json"
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert json.loads(stored.read_text())["keys"] == {"OPENAI_API_KEY": SECRET}
    assert SECRET not in result.stdout + result.stderr
    # the stored key is the one requests carry now, with no variable set
    server.script(Reply(text="hello from the stored key"))
    ran = run_agent(["exec", "hi"], cwd=tmp_path, env=env)
    assert ran.returncode == 0, ran.stderr
    assert "hello from the stored key" in ran.stdout
    assert server.requests[-1].headers.get("authorization") == f"Bearer {SECRET}"


def test_an_environment_key_wins_over_the_stored_one(server, tmp_path):
    env = {"OPENAI_BASE_URL": server.openai_base_url}
    assert run_agent(["login", "--with-api-key", "--no-check"], cwd=tmp_path, env=env, stdin=SECRET).returncode == 0
    server.script(Reply(text="ok"))
    ran = run_agent(["exec", "hi"], cwd=tmp_path, env={**env, "OPENAI_API_KEY": "from-env"})
    assert ran.returncode == 0, ran.stderr
    assert server.requests[-1].headers.get("authorization") == "Bearer from-env"


def test_a_refused_key_is_not_stored_and_the_reason_is_said(tmp_path, isolated_home):
    refuse = {("GET", "/v1/models"): lambda rec: (401, {"error": {"message": "Incorrect API key provided"}})}
    with FakeModelServer(routes=refuse) as refusing:
        env = {"OPENAI_BASE_URL": refusing.openai_base_url}
        result = run_agent(["login", "--with-api-key"], cwd=tmp_path, env=env, stdin=SECRET)
    assert result.returncode == 1
    assert "did not accept the key: the key was refused (401: Incorrect API key provided)" in result.stderr
    assert not (isolated_home / "auth.json").exists()


def test_logout_forgets_the_key_and_says_what_remains(tmp_path, isolated_home):
    run_agent(["login", "--provider", "anthropic", "--with-api-key", "--no-check"], cwd=tmp_path, stdin=SECRET)
    result = run_agent(["logout"], cwd=tmp_path, env={"ANTHROPIC_API_KEY": "x"})
    assert result.returncode == 0
    assert "removed the stored ANTHROPIC_API_KEY" in result.stdout
    assert "ANTHROPIC_API_KEY is still set in the environment" in result.stdout
    assert json.loads((isolated_home / "auth.json").read_text())["keys"] == {}
    again = run_agent(["exec", "hi"], cwd=tmp_path)
    assert again.returncode == 2 and "agent login" in again.stderr


def test_only_an_anthropic_key_uses_anthropic(server, tmp_path):
    server.script(Reply(text="answered by claude"))
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url}
    result = run_agent(["exec", "hi"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "answered by claude" in result.stdout
    assert server.requests[-1].protocol == "anthropic"
    assert server.requests[-1].body["model"] == "claude-sonnet-4-5"


def test_with_several_keys_it_says_which_it_chose_and_how_to_change_it(server, tmp_path):
    server.script(Reply(text="ok"))
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url, "ANTHROPIC_API_KEY": "k"}
    result = run_agent(["exec", "hi"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert "keys for OpenAI and Anthropic are set; using OpenAI (gpt-5). Choose with --provider anthropic" in (
        result.stderr
    )


def test_doctor_times_a_real_request_and_prints_no_key(server, tmp_path):
    git_init(tmp_path / "repo")
    server.script(Reply(text="OK"))
    env = {"OPENAI_API_KEY": SECRET, "OPENAI_BASE_URL": server.openai_base_url}
    result = run_agent(["doctor", "-m", "test-model", "--provider", "openai-chat"], cwd=tmp_path / "repo", env=env)
    assert result.returncode == 0, result.stdout + result.stderr
    assert SECRET not in result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert any(line.startswith("ok") and "model test-model answered in" in line for line in lines), result.stdout
    assert any("OPENAI_API_KEY: environment" in line for line in lines)
    for area in ("config", "sandbox", "trust", "hooks", "plugins", "mcp", "disk"):
        assert any(f"  {area} " in line for line in lines), (area, result.stdout)
    assert len(server.requests) == 1


def test_doctor_exits_1_on_a_broken_config_and_on_no_key(tmp_path, isolated_home):
    (isolated_home / "config.toml").write_text("model = [\n")
    result = run_agent(["doctor"], cwd=tmp_path)
    assert result.returncode == 1
    assert "FAIL  config" in result.stdout and "config.toml" in result.stdout
    (isolated_home / "config.toml").write_text('model = "gpt-5"\n')
    result = run_agent(["doctor"], cwd=tmp_path)
    assert result.returncode == 1
    assert "FAIL  model" in result.stdout and "OPENAI_API_KEY is not set" in result.stdout
    assert "1 problem(s) found" in result.stdout


def test_doctor_reports_a_failing_mcp_server(tmp_path, isolated_home):
    (isolated_home / "config.toml").write_text('[mcp_servers.broken]\ncommand = "/nonexistent/server"\n')
    result = run_agent(["doctor", "--no-request"], cwd=tmp_path)
    assert result.returncode == 1
    assert "FAIL  mcp" in result.stdout and "broken" in result.stdout


@pytest.mark.serial  # a real terminal (tmux): the screen is read against deadlines
@pytest.mark.parametrize("words", [[], ["resume", "--last"]], ids=["agent", "agent resume --last"])
def test_agent_in_a_terminal_with_no_key_opens_set_up_instead_of_an_error(server, tmp_path, isolated_home, words):
    """`agent` (or `agent resume` of a session saved while a key was set) in a real terminal (tmux)
    with no key: the set-up screen, not `OPENAI_API_KEY is not set`."""
    tmux = shutil.which("tmux")
    if tmux is None:
        pytest.skip("tmux is not installed (.ci/run installs it)")
    if words:
        server.script(Reply(text="saved"))
        saved = run_agent(
            ["exec", "--provider", "openai", "-m", "test-model", "hi"], cwd=tmp_path, env=provider_env(server, "openai")
        )
        assert saved.returncode == 0, saved.stderr
    env = agent_process_env(TERM="xterm-256color", AGENT_HOME=str(isolated_home))
    name = f"firstrun-{os.getpid()}"
    command = f"{shlex.join([sys.executable, '-m', 'agent_cli', *words])}; echo EXITED $?; sleep 30"
    subprocess.run(
        [tmux, "-L", name, "new-session", "-d", "-x", "100", "-y", "30", "-c", str(tmp_path), command],
        env=env,
        check=True,
    )
    try:

        def screen() -> str:
            return subprocess.run(
                [tmux, "-L", name, "capture-pane", "-p"], capture_output=True, text=True, check=False
            ).stdout

        wait_for(lambda: "Set up a model" in screen(), within=30, what="the set-up screen")
        text = screen()
        assert "No key for OpenAI (OPENAI_API_KEY is not set)" in text
        assert "OpenAI: paste an API key" in text and "Anthropic: paste an API key" in text
        subprocess.run([tmux, "-L", name, "send-keys", "Escape"], check=True)
        wait_for(lambda: "EXITED" in screen(), within=20, what="the program to end")
        assert "set-up left without choosing a provider" in screen()
    finally:
        subprocess.run([tmux, "-L", name, "kill-server"], check=False)


def test_doctor_lists_the_language_servers_it_would_start_without_starting_them(tmp_path, isolated_home):
    """A server found on PATH for the project's language, a configured one that is missing, and the
    lint/test commands; none of the servers is started (the fake one would leave a mark)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    mark = tmp_path / "started"
    server = bin_dir / "pylsp"
    server.write_text(f"#!/bin/sh\ntouch {shlex.quote(str(mark))}\n")
    server.chmod(0o755)
    (isolated_home / "config.toml").write_text(
        'test_command = "pytest -q"\n[lsp.ghost]\ncommand = ["ghost-langserver"]\nlanguages = ["go"]\n'
    )
    repo = tmp_path / "repo"
    git_init(repo)
    (repo / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", "AGENT_LSP_AUTODETECT": "1"}
    result = run_agent(["doctor", "--no-request"], cwd=repo, env=env)
    lines = result.stdout.splitlines()
    assert any(line.startswith("ok") and "  lsp " in line and "pylsp" in line and "python" in line for line in lines), (
        result.stdout
    )
    assert any(line.startswith("warn") and "ghost" in line and "ghost-langserver" in line for line in lines), (
        result.stdout
    )
    assert any("  checks " in line and "test_command: pytest -q" in line for line in lines), result.stdout
    assert not mark.exists()

    env["AGENT_LSP_AUTODETECT"] = "0"  # the servers on PATH are left out, and doctor says so
    result = run_agent(["doctor", "--no-request"], cwd=repo, env=env)
    lsp = [line for line in result.stdout.splitlines() if "  lsp " in line]
    assert not any("pylsp" in line for line in lsp) and any("AGENT_LSP_AUTODETECT=0" in line for line in lsp), lsp

    (isolated_home / "config.toml").write_text("lsp = false\n")
    result = run_agent(["doctor", "--no-request"], cwd=repo, env=env)
    assert any("  lsp " in line and "off (lsp = false)" in line for line in result.stdout.splitlines()), result.stdout


def test_doctor_runs_no_session_end_hook(tmp_path, isolated_home):
    """doctor opens a session to see what loads; it is a check, not a session the user's hooks hear of."""
    mark = tmp_path / "session-ended"
    claude = Path(os.environ["HOME"]) / ".claude"
    claude.mkdir(parents=True, exist_ok=True)
    hook = {"hooks": [{"type": "command", "command": f"touch {shlex.quote(str(mark))}"}]}
    (claude / "settings.json").write_text(json.dumps({"hooks": {"SessionEnd": [hook]}}))
    result = run_agent(["doctor", "--no-request"], cwd=git_init(tmp_path / "repo"))
    assert "1 hook(s): SessionEnd" in result.stdout, result.stdout
    assert not mark.exists()


def test_a_key_exported_in_this_shell_wins_over_a_stored_one_and_says_so(server, tmp_path, isolated_home):
    """Issue 51, item 2: after `agent login` (OpenAI), `ANTHROPIC_API_KEY=… agent` started on
    OpenAI without a word. What the user exported wins, the warning names both, and doctor says
    which key is used and why."""
    login = run_agent(["login", "--with-api-key", "--no-check"], cwd=tmp_path, stdin=SECRET)
    assert login.returncode == 0, login.stderr
    assert (isolated_home / "setup.json").exists()  # login saved OpenAI as the choice too
    server.script(Reply(text="answered by claude"))
    exported = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.base_url}
    result = run_agent(["exec", "hi"], cwd=tmp_path, env=exported)
    assert result.returncode == 0, result.stderr
    assert server.requests[-1].protocol == "anthropic" and "answered by claude" in result.stdout
    assert "ANTHROPIC_API_KEY is exported in this shell: using Anthropic (claude-sonnet-4-5)" in result.stderr
    assert "--provider openai" in result.stderr

    doctor = run_agent(["doctor", "--no-request"], cwd=tmp_path, env=exported)
    keys = [line for line in doctor.stdout.splitlines() if "  keys " in line]
    assert any("OPENAI_API_KEY: stored" in line for line in keys), keys
    assert any(
        "in use: ANTHROPIC_API_KEY, exported in this shell, for anthropic (ANTHROPIC_API_KEY is exported" in line
        for line in keys
    ), keys
    assert SECRET not in doctor.stdout


def test_with_a_stored_and_an_exported_key_the_warning_names_both_sources(server, tmp_path, isolated_home):
    """No set-up choice saved (only auth.json): the exported key still wins, and the warning
    that both exist comes whatever their source."""
    run_agent(["login", "--provider", "anthropic", "--with-api-key", "--no-check"], cwd=tmp_path, stdin=SECRET)
    (isolated_home / "setup.json").unlink()
    server.script(Reply(text="ok"))
    env = {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.openai_base_url}
    result = run_agent(["exec", "hi"], cwd=tmp_path, env=env)
    assert result.returncode == 0, result.stderr
    assert server.requests[-1].protocol != "anthropic"
    assert (
        "keys for OpenAI (exported in this shell) and Anthropic (stored by `agent login`) are set; using OpenAI"
        in result.stderr
    )
    assert "--provider anthropic" in result.stderr


def test_doctor_wants_no_key_for_a_keyless_local_server(server, tmp_path):
    result = run_agent(["doctor", "--provider", "ollama", "-m", "fake-model", "--no-request"], cwd=tmp_path)
    keys = [line for line in result.stdout.splitlines() if "  keys " in line]
    assert keys and not any(line.startswith("warn") for line in keys), keys
    assert any("ollama needs no API key" in line for line in keys), keys


def test_doctor_finds_python_in_a_repository_of_py_files(tmp_path, isolated_home):
    """Issue 51, item 12: a repository of .py files without pyproject.toml: doctor listed the
    servers of other languages and nothing for Python; it names Python's, or says there is none."""
    repo = git_init(tmp_path / "repo")
    (repo / "main.py").write_text("print('hi')\n")
    subprocess.run(["git", "add", "main.py"], cwd=repo, check=True)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name in ("pylsp", "rust-analyzer"):
        (bin_dir / name).write_text("#!/bin/sh\nexit 0\n")
        (bin_dir / name).chmod(0o755)
    env = {"PATH": f"{bin_dir}{os.pathsep}/usr/bin{os.pathsep}/bin", "AGENT_LSP_AUTODETECT": "1"}
    lsp = [
        line
        for line in run_agent(["doctor", "--no-request"], cwd=repo, env=env).stdout.splitlines()
        if "  lsp " in line
    ]
    assert any(line.startswith("ok") and "pylsp for python" in line for line in lsp), lsp
    assert not any("rust-analyzer" in line for line in lsp), lsp  # no Rust here
    (bin_dir / "pylsp").unlink()
    lsp = [
        line
        for line in run_agent(["doctor", "--no-request"], cwd=repo, env=env).stdout.splitlines()
        if "  lsp " in line
    ]
    assert any(
        line.startswith("warn") and "no python language server" in line and ".py files" in line for line in lsp
    ), lsp


def test_logout_says_it_forgot_the_set_up_choice(server, tmp_path, isolated_home):
    """Issue 51, item 12: `agent logout` said "no stored key to remove" while it deleted the saved
    server (set-up's setup.json)."""
    (isolated_home / "setup.json").write_text(
        json.dumps(
            {
                "provider": "llamacpp",
                "model": "fake-model",
                "providers": {"llamacpp": {"base_url": server.openai_base_url}},
            }
        )
    )
    result = run_agent(["logout"], cwd=tmp_path)
    assert result.returncode == 0
    assert "forgot the set-up choice: fake-model via llamacpp at " + server.openai_base_url in result.stdout
    assert "no stored key to remove" in result.stdout and not (isolated_home / "setup.json").exists()
